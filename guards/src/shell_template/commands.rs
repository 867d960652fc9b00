//! Commands that read an argument as shell code, arithmetic or a variable name: a value
//! passed to them is run, however it is quoted. The lexer refuses templates in their
//! arguments when it sees the command by name as the first word of a simple command; it
//! cannot see one called through a variable, a function, an alias or another program
//! (`xargs`, `find -exec`, `env`, `sudo`, `ssh` …), which the book says.

/// How a command treats its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reads {
    /// Every argument is code, arithmetic or a name.
    AllArguments(&'static str),
    /// A declaration (`export NAME=value`): the part before `=` is a name (bash evaluates a
    /// subscript in it); with any option (`-i`) the value may be arithmetic too.
    Declaration,
    /// Only with `-v NAME` (`printf -v`, `test -v`, `[ -v`): then every later argument.
    WithDashV,
    /// A shell: the operand after `-c` is a script.
    ShellDashC,
    /// `command`, `builtin`, `exec`: the next word is the command.
    Prefix,
    /// Defines aliases, which change how later text is read: nothing after it can be placed.
    Alias,
    /// Nothing special.
    Plain,
}

const RUNS_CODE: &str = "runs its arguments as shell code";
const ARITHMETIC: &str =
    "evaluates its arguments as arithmetic (bash runs `$(…)` in an array subscript there)";
const NAMES: &str =
    "reads arguments as variable names, and bash evaluates a subscript in one (`a[$(cmd)]` runs cmd)";

pub(super) fn reads(name: &str) -> Reads {
    match name {
        "eval" | "trap" | "." | "source" => Reads::AllArguments(RUNS_CODE),
        "let" => Reads::AllArguments(ARITHMETIC),
        "read" | "unset" | "mapfile" | "readarray" | "getopts" => Reads::AllArguments(NAMES),
        "export" | "readonly" | "declare" | "typeset" | "local" => Reads::Declaration,
        "printf" | "test" | "[" => Reads::WithDashV,
        "sh" | "bash" | "dash" | "ash" | "ksh" | "mksh" | "zsh" | "yash" | "posh" => {
            Reads::ShellDashC
        }
        "command" | "builtin" | "exec" => Reads::Prefix,
        "alias" => Reads::Alias,
        _ => Reads::Plain,
    }
}

/// What a declaration does with a name or, after an option, with its value.
pub(super) const DECLARATION: &str =
    "reads it as a variable name or, after an option such as -i, as arithmetic";
/// What `printf -v` / `test -v` do.
pub(super) const DASH_V: &str = NAMES;
/// What `sh -c` does with its command string.
pub(super) const SCRIPT: &str =
    "runs it as a script (pass the value as a later argument: `sh -c '… \"$1\"' sh \"$x\"`)";
