//! The lexer: reads POSIX `sh` text as dash and bash (as `sh`) read it, far enough to say
//! where the shell stands at each template hole, and refuses every hole it cannot place
//! with certainty. It follows quoting (`\`, `'…'`, `"…"`), substitutions (`$(…)` as code,
//! recursively; `${…}`, backquotes, arithmetic), comments, here-documents (bodies read by
//! lines, as both shells do), `case` patterns, and the command structure it needs to see
//! reserved words and the commands that read their arguments as code (`commands.rs`).
//!
//! A hole is a zero-length offset: the text is the command with its templates taken out,
//! so a hole is an atom between two bytes. No multi-byte token is read across a hole
//! (`<` hole `<` is not `<<`), and a word with a hole is never a reserved word.
//!
//! Where dash and bash disagree, or where the lexer does not model a construct, it *stops*:
//! every hole from there on is refused with the reason. Being wrong about a position can
//! only ever cost literalness (a reference expanded unquoted), never run a value — except
//! in arithmetic, `[[ … ]]` and subscripts, whose ends are therefore found conservatively
//! (anything unusual inside stops the lexer).

use super::commands::{self, Reads};
use super::refusal::Refusal;
use super::{Place, Placement};

/// Substitutions nested deeper than this stop the lexer (no stack overflow on hostile text).
const MAX_DEPTH: usize = 64;

/// The place of each hole (`holes` ascending) in `text`.
pub(super) fn classify(text: &str, holes: &[usize]) -> Vec<Placement> {
    let mut lexer = Lexer {
        s: text.as_bytes(),
        i: 0,
        holes,
        next: 0,
        out: vec![None; holes.len()],
        forced: None,
        stopped: None,
        pending: Vec::new(),
        depth: 0,
        in_substitution: 0,
    };
    lexer.code(End::Input);
    let rest = lexer.stopped.clone().unwrap_or(Refusal::Unterminated);
    // Text the shell cannot finish reading is a syntax error: no hole in it is placed.
    let unfinished = rest == Refusal::Unterminated && lexer.stopped.is_some();
    lexer
        .out
        .into_iter()
        .map(|p| match p {
            Some(Ok(_)) if unfinished => Err(Refusal::Unterminated),
            Some(p) => p,
            None => Err(rest.clone()),
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Input,
    /// The `)` of a `$(` or a subshell.
    Paren,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Close {
    /// `$((…))`, `((…))`.
    DoubleParen,
    /// `$[…]`.
    Bracket,
}

struct HereDoc {
    delimiter: Vec<u8>,
    strip_tabs: bool,
    quoted: bool,
}

struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
    holes: &'a [usize],
    /// The first hole not placed yet.
    next: usize,
    out: Vec<Option<Placement>>,
    /// Every hole is refused with this while it is set (inside `${…}`, arithmetic, …).
    forced: Option<Refusal>,
    /// Set once the lexer cannot follow the shell any more.
    stopped: Option<Refusal>,
    /// Here-documents whose bodies start at the next newline.
    pending: Vec<HereDoc>,
    depth: usize,
    /// Inside `$(…)`, at any depth.
    in_substitution: usize,
}

// ---- holes --------------------------------------------------------------------------------

impl Lexer<'_> {
    fn byte(&self, at: usize) -> Option<u8> {
        self.s.get(at).copied()
    }

    fn hole_at(&self, at: usize) -> bool {
        self.holes.get(self.next) == Some(&at)
    }

    /// Whether a hole is at the cursor. A hole the lexer went past is refused (it never
    /// should: the fuzz target checks).
    fn hole_here(&mut self) -> bool {
        while self.holes.get(self.next).is_some_and(|&h| h < self.i) {
            self.set(Err(Refusal::Missed));
        }
        self.hole_at(self.i)
    }

    /// The byte `k` after the cursor is `b`, and no hole sits before it.
    fn next_is(&self, k: usize, b: u8) -> bool {
        (1..=k).all(|d| !self.hole_at(self.i + d)) && self.byte(self.i + k) == Some(b)
    }

    fn set(&mut self, placement: Placement) {
        if let Some(slot) = self.out.get_mut(self.next) {
            *slot = Some(placement);
        }
        self.next += 1;
    }

    /// Place the hole at the cursor.
    fn place(&mut self, place: Place) {
        let after_dollar = self.i > 0 && self.byte(self.i - 1) == Some(b'$');
        let placement = match &self.forced {
            Some(r) => Err(r.clone()),
            None if after_dollar && !matches!(place, Place::SingleQuoted | Place::Comment) => {
                Err(Refusal::AfterDollar)
            }
            // The `"` its reference opens is one level more for the second reading.
            None if self.depth >= MAX_DEPTH
                && matches!(place, Place::Code | Place::SingleQuoted) =>
            {
                Err(Refusal::TooDeep)
            }
            None => Ok(place),
        };
        self.set(placement);
    }

    /// Refuse the hole at the cursor.
    fn refuse(&mut self, refusal: Refusal) {
        let refusal = self.forced.clone().unwrap_or(refusal);
        self.set(Err(refusal));
    }

    /// From here on the shell's reading is unknown.
    fn stop(&mut self, refusal: Refusal) {
        if self.stopped.is_none() {
            self.stopped = Some(refusal);
        }
    }

    fn stop_after(&mut self, what: &'static str) {
        self.stop(Refusal::After(what));
    }

    /// Refuse every hole with `refusal` until the returned value is restored.
    fn force(&mut self, refusal: Refusal) -> Option<Refusal> {
        let saved = self.forced.clone();
        if self.forced.is_none() {
            self.forced = Some(refusal);
        }
        saved
    }

    /// One level deeper; false (and stopped) past [`MAX_DEPTH`].
    fn enter(&mut self) -> bool {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.stop_after("substitutions nested too deep");
            return false;
        }
        true
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}

// ---- code -----------------------------------------------------------------------------------

/// Where a `case` stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    /// After `case`: the word to match.
    Subject,
    /// Expecting `in`.
    In,
    /// Reading patterns up to `)`; `started` once a pattern word was seen.
    Pattern { started: bool },
    /// The commands of a branch, up to `;;`.
    Body,
}

/// The simple command being read.
#[derive(Debug, Clone)]
struct Command {
    /// The next word is in command position.
    start: bool,
    /// An assignment or a prefix (`command`) came first: no reserved word any more.
    no_reserved: bool,
    name: String,
    reads: Reads,
    saw_option: bool,
    saw_dash_v: bool,
    saw_dash_c: bool,
    /// Non-option words after `-c`.
    operands: usize,
}

impl Command {
    fn new() -> Self {
        Self {
            start: true,
            no_reserved: false,
            name: String::new(),
            reads: Reads::Plain,
            saw_option: false,
            saw_dash_v: false,
            saw_dash_c: false,
            operands: 0,
        }
    }

    /// After a compound command's last word (`fi`, `done`, `esac`, `}`, `))`).
    fn ended() -> Self {
        Self {
            start: false,
            ..Self::new()
        }
    }
}

/// What the lexer keeps about one level of code (the whole text, or one `$(…)`).
struct Level {
    cmd: Command,
    cases: Vec<Case>,
    /// Inside `[[ … ]]`.
    conditional: bool,
    /// The next word is a redirection's target.
    redirect: bool,
    /// The previous word named a command: `(` `)` may define a function.
    function_name: bool,
}

/// How a word's holes are placed.
#[derive(Debug, Clone)]
enum Role {
    Plain,
    /// In command position: `name[…]` is an array subscript.
    CommandPosition,
    /// Of `export`/`local`/…: the part before `=` is a name.
    Declaration(Refusal),
    Refuse(Refusal),
}

struct Word {
    /// The word's text when it is plain characters only (no quote, expansion or hole).
    literal: Option<Vec<u8>>,
    /// `NAME=…`.
    assignment: bool,
}

const RESERVED: &[&[u8]] = &[
    b"if",
    b"then",
    b"else",
    b"elif",
    b"fi",
    b"do",
    b"done",
    b"case",
    b"esac",
    b"while",
    b"until",
    b"for",
    b"select",
    b"in",
    b"{",
    b"}",
    b"!",
    b"[[",
    b"function",
    b"time",
];

fn is_name(bytes: &[u8]) -> bool {
    matches!(bytes.first(), Some(b) if b.is_ascii_alphabetic() || *b == b'_')
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

fn is_special_parameter(b: u8) -> bool {
    matches!(b, b'$' | b'#' | b'?' | b'!' | b'-' | b'@' | b'*') || b.is_ascii_digit()
}

impl Level {
    fn new() -> Self {
        Self {
            cmd: Command::new(),
            cases: Vec::new(),
            conditional: false,
            redirect: false,
            function_name: false,
        }
    }

    fn in_patterns(&self) -> bool {
        matches!(self.cases.last(), Some(Case::Pattern { .. }))
    }

    /// A command separator (`;`, `&`, `&&`, `|`, `||`, newline).
    fn separate(&mut self) {
        self.cmd = Command::new();
        self.redirect = false;
        self.function_name = false;
    }

    fn role(&self) -> Role {
        if self.redirect {
            return Role::Plain;
        }
        if self.conditional {
            return Role::Refuse(Refusal::BashConditional);
        }
        if matches!(
            self.cases.last(),
            Some(Case::Subject | Case::In | Case::Pattern { .. })
        ) {
            return Role::Plain;
        }
        let cmd = &self.cmd;
        if cmd.start {
            return Role::CommandPosition;
        }
        let argument = |command: String, does| Refusal::CommandArgument { command, does };
        match cmd.reads {
            Reads::AllArguments(does) => Role::Refuse(argument(cmd.name.clone(), does)),
            Reads::Declaration if cmd.saw_option => {
                Role::Refuse(argument(cmd.name.clone(), commands::DECLARATION))
            }
            Reads::Declaration => {
                Role::Declaration(argument(cmd.name.clone(), commands::DECLARATION))
            }
            Reads::WithDashV if cmd.saw_dash_v => {
                Role::Refuse(argument(format!("{} -v", cmd.name), commands::DASH_V))
            }
            Reads::ShellDashC if cmd.saw_dash_c && cmd.operands == 0 => {
                Role::Refuse(argument(format!("{} -c", cmd.name), commands::SCRIPT))
            }
            _ => Role::Plain,
        }
    }
}

impl Lexer<'_> {
    /// Read code up to `end`.
    fn code(&mut self, end: End) {
        let mut lv = Level::new();
        loop {
            if self.stopped.is_some() {
                return;
            }
            if self.hole_here() {
                self.word(&mut lv);
                continue;
            }
            let Some(c) = self.byte(self.i) else {
                if end == End::Paren {
                    self.stop(Refusal::Unterminated);
                }
                return;
            };
            match c {
                b' ' | b'\t' => self.i += 1,
                b'\\' if self.next_is(1, b'\n') => self.i += 2,
                b'\n' => {
                    self.i += 1;
                    self.bodies();
                    if !matches!(
                        lv.cases.last(),
                        Some(Case::Subject | Case::In | Case::Pattern { .. })
                    ) {
                        lv.separate();
                    }
                }
                b'#' => self.comment(),
                b';' => self.semicolon(&mut lv),
                b'&' => {
                    if self.next_is(1, b'>') {
                        self.stop_after("`&>` (a redirection in bash, `&` then `>` in dash)");
                        return;
                    }
                    self.i += if self.next_is(1, b'&') { 2 } else { 1 };
                    lv.separate();
                }
                b'|' => {
                    if lv.in_patterns() {
                        self.i += 1;
                    } else if self.next_is(1, b'&') {
                        self.stop_after("`|&` (a pipe of both streams in bash only)");
                        return;
                    } else {
                        self.i += if self.next_is(1, b'|') { 2 } else { 1 };
                        lv.separate();
                    }
                }
                b'(' => self.open_paren(&mut lv),
                b')' => {
                    if lv.in_patterns() {
                        self.i += 1;
                        if let Some(top) = lv.cases.last_mut() {
                            *top = Case::Body;
                        }
                        lv.separate();
                    } else if lv.conditional {
                        self.stop_after("`)` inside `[[ … ]]`");
                    } else if end == End::Paren {
                        self.i += 1;
                        return;
                    } else {
                        self.stop_after("an unbalanced `)`");
                    }
                }
                b'<' | b'>' => self.redirection(&mut lv, c),
                _ => self.word(&mut lv),
            }
        }
    }

    fn semicolon(&mut self, lv: &mut Level) {
        let case_end = if self.next_is(1, b';') {
            self.i += if self.next_is(2, b'&') { 3 } else { 2 };
            true
        } else if self.next_is(1, b'&') {
            self.i += 2;
            true
        } else {
            self.i += 1;
            false
        };
        if case_end {
            match lv.cases.last_mut() {
                Some(top @ Case::Body) => *top = Case::Pattern { started: false },
                _ => {
                    self.stop_after("`;;` outside a `case`");
                    return;
                }
            }
        }
        lv.separate();
    }

    fn open_paren(&mut self, lv: &mut Level) {
        if matches!(lv.cases.last(), Some(Case::Pattern { started: false })) {
            self.i += 1;
            return;
        }
        if lv.conditional {
            self.stop_after("`(` inside `[[ … ]]`");
            return;
        }
        if lv.function_name {
            let mut j = self.i + 1;
            while matches!(self.byte(j), Some(b' ' | b'\t')) && !self.hole_at(j) {
                j += 1;
            }
            if self.byte(j) == Some(b')') && !self.hole_at(j) && !self.hole_at(self.i + 1) {
                self.i = j + 1;
                lv.separate();
                return;
            }
        }
        if lv.cmd.start && self.next_is(1, b'(') {
            self.i += 2;
            self.arithmetic(Close::DoubleParen);
            lv.cmd = Command::ended();
            return;
        }
        self.i += 1;
        if self.enter() {
            self.code(End::Paren);
        }
        self.leave();
        lv.cmd = Command::ended();
        lv.function_name = false;
    }

    fn redirection(&mut self, lv: &mut Level, c: u8) {
        if lv.conditional {
            self.stop_after("`<` or `>` inside `[[ … ]]`");
            return;
        }
        if c == b'<' && self.next_is(1, b'<') {
            if self.next_is(2, b'<') {
                self.stop_after("a here-string `<<<` (bash only)");
                return;
            }
            let strip_tabs = self.next_is(2, b'-');
            self.i += if strip_tabs { 3 } else { 2 };
            self.here_doc_operator(strip_tabs);
            return;
        }
        let two = match c {
            b'<' => self.next_is(1, b'&') || self.next_is(1, b'>'),
            _ => self.next_is(1, b'>') || self.next_is(1, b'&') || self.next_is(1, b'|'),
        };
        self.i += if two { 2 } else { 1 };
        lv.redirect = true;
        lv.function_name = false;
    }

    /// A word in code, and what it does to the command being read.
    fn word(&mut self, lv: &mut Level) {
        let role = lv.role();
        let word = self.scan_word(&role);
        if self.stopped.is_some() {
            return;
        }
        // `2>file`: an IO number, not a word.
        let io_number = word
            .literal
            .as_deref()
            .is_some_and(|l| !l.is_empty() && l.iter().all(u8::is_ascii_digit))
            && !self.hole_at(self.i)
            && matches!(self.byte(self.i), Some(b'<' | b'>'));
        if !io_number {
            self.after_word(lv, word);
        }
    }

    fn after_word(&mut self, lv: &mut Level, word: Word) {
        let literal = word.literal.as_deref();
        lv.function_name = false;
        if lv.redirect {
            lv.redirect = false;
            return;
        }
        if lv.conditional {
            if literal == Some(b"]]") {
                lv.conditional = false;
                lv.cmd = Command::ended();
            }
            return;
        }
        match lv.cases.last_mut() {
            Some(top @ Case::Subject) => {
                *top = Case::In;
                return;
            }
            Some(Case::In) => {
                if literal == Some(b"in") {
                    if let Some(top) = lv.cases.last_mut() {
                        *top = Case::Pattern { started: false };
                    }
                } else {
                    self.stop_after("a `case` without `in`");
                }
                return;
            }
            Some(Case::Pattern { started }) => {
                if !*started && literal == Some(b"esac") {
                    lv.cases.pop();
                    lv.cmd = Command::ended();
                } else {
                    *started = true;
                }
                return;
            }
            _ => {}
        }
        let cmd = &mut lv.cmd;
        if cmd.start {
            let reserved = literal.filter(|l| !cmd.no_reserved && RESERVED.contains(l));
            if let Some(reserved) = reserved {
                match reserved {
                    b"case" => {
                        lv.cases.push(Case::Subject);
                        cmd.start = false;
                    }
                    b"esac" => {
                        if lv.cases.last() == Some(&Case::Body) {
                            lv.cases.pop();
                        }
                        lv.cmd = Command::ended();
                    }
                    b"[[" => lv.conditional = true,
                    b"for" | b"select" | b"function" | b"fi" | b"done" | b"}" => {
                        lv.cmd = Command::ended();
                    }
                    _ => {}
                }
                return;
            }
            if word.assignment {
                cmd.no_reserved = true;
                return;
            }
            cmd.start = false;
            match literal {
                Some(name) => {
                    let name = String::from_utf8_lossy(name).into_owned();
                    cmd.reads = commands::reads(&name);
                    cmd.name = name;
                    match cmd.reads {
                        Reads::Alias => {
                            self.stop_after(
                                "an `alias` command, which changes how later text is read",
                            );
                        }
                        Reads::Prefix => {
                            cmd.start = true;
                            cmd.no_reserved = true;
                        }
                        _ => lv.function_name = true,
                    }
                }
                None => cmd.reads = Reads::Plain,
            }
            return;
        }
        match literal {
            Some(l) if l.len() > 1 && l.first() == Some(&b'-') && l != b"--" => {
                cmd.saw_option = true;
                if l == b"-v" {
                    cmd.saw_dash_v = true;
                }
                if l.get(1) != Some(&b'-') && l.contains(&b'c') {
                    cmd.saw_dash_c = true;
                }
            }
            _ => {
                if cmd.saw_dash_c {
                    cmd.operands += 1;
                }
            }
        }
    }

    /// Scan one word from the cursor.
    fn scan_word(&mut self, role: &Role) -> Word {
        let saved = match role {
            Role::Refuse(r) | Role::Declaration(r) => self.force(r.clone()),
            Role::Plain | Role::CommandPosition => self.forced.clone(),
        };
        let mut literal = Some(Vec::new());
        let mut assignment = false;
        let mut saw_eq = false;
        let names_a_variable = matches!(role, Role::CommandPosition | Role::Declaration(_));
        loop {
            if self.stopped.is_some() {
                break;
            }
            if self.hole_here() {
                self.place(Place::Code);
                literal = None;
                continue;
            }
            let Some(c) = self.byte(self.i) else { break };
            match c {
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>' => break,
                b'\\' => {
                    if self.next_is(1, b'\n') {
                        // A line continuation is not there at all.
                        self.i += 2;
                        continue;
                    }
                    if self.hole_at(self.i + 1) {
                        self.i += 1;
                        self.refuse(Refusal::AfterBackslash);
                    } else {
                        self.i = (self.i + 2).min(self.s.len());
                    }
                    literal = None;
                }
                b'\'' => {
                    self.single_quoted();
                    literal = None;
                }
                b'"' => {
                    self.double_quoted(None);
                    literal = None;
                }
                b'`' => {
                    self.backquoted();
                    literal = None;
                }
                b'$' => {
                    self.dollar(false);
                    literal = None;
                }
                b'=' if !saw_eq => {
                    saw_eq = true;
                    assignment = literal.as_deref().is_some_and(is_name);
                    if matches!(role, Role::Declaration(_)) {
                        // The value of `export NAME=value` is a value.
                        self.forced = saved.clone();
                    }
                    if let Some(l) = &mut literal {
                        l.push(c);
                    }
                    self.i += 1;
                }
                b'[' if names_a_variable && !saw_eq && literal.as_deref().is_some_and(is_name) => {
                    self.force(Refusal::Subscript);
                    literal = None;
                    self.i += 1;
                }
                _ => {
                    if let Some(l) = &mut literal {
                        l.push(c);
                    }
                    self.i += 1;
                }
            }
        }
        self.forced = saved;
        Word {
            literal,
            assignment,
        }
    }

    fn comment(&mut self) {
        loop {
            if self.hole_here() {
                self.place(Place::Comment);
                continue;
            }
            match self.byte(self.i) {
                None | Some(b'\n') => return,
                Some(_) => self.i += 1,
            }
        }
    }
}

// ---- quotes and substitutions ---------------------------------------------------------------

impl Lexer<'_> {
    /// `'…'`, from its opening quote.
    fn single_quoted(&mut self) {
        self.i += 1;
        loop {
            if self.hole_here() {
                self.place(Place::SingleQuoted);
                continue;
            }
            match self.byte(self.i) {
                None => {
                    self.stop(Refusal::Unterminated);
                    return;
                }
                Some(b'\'') => {
                    self.i += 1;
                    return;
                }
                Some(_) => self.i += 1,
            }
        }
    }

    /// `"…"`, from its opening quote; every hole refused with `refuse` when given.
    fn double_quoted(&mut self, refuse: Option<Refusal>) {
        self.i += 1;
        let saved = self.forced.clone();
        if let Some(r) = refuse {
            self.force(r);
        }
        if self.enter() {
            loop {
                if self.stopped.is_some() {
                    break;
                }
                if self.hole_here() {
                    self.place(Place::DoubleQuoted);
                    continue;
                }
                let Some(c) = self.byte(self.i) else {
                    self.stop(Refusal::Unterminated);
                    break;
                };
                match c {
                    b'"' => {
                        self.i += 1;
                        break;
                    }
                    b'\\' => {
                        if self.hole_at(self.i + 1) {
                            self.i += 1;
                            self.refuse(Refusal::AfterBackslash);
                        } else if matches!(
                            self.byte(self.i + 1),
                            Some(b'$' | b'`' | b'"' | b'\\' | b'\n')
                        ) {
                            self.i += 2;
                        } else {
                            self.i += 1;
                        }
                    }
                    b'`' => self.backquoted(),
                    b'$' => self.dollar(true),
                    _ => self.i += 1,
                }
            }
        }
        self.leave();
        self.forced = saved;
    }

    /// A `$` (in code, or inside `"…"` when `in_double`).
    fn dollar(&mut self, in_double: bool) {
        if self.hole_at(self.i + 1) {
            // `$` then a reference: refused where it is placed (`AfterDollar`).
            self.i += 1;
            return;
        }
        match self.byte(self.i + 1) {
            Some(b'(') if self.next_is(2, b'(') => {
                self.i += 3;
                self.arithmetic(Close::DoubleParen);
            }
            Some(b'(') => {
                self.i += 2;
                self.in_substitution += 1;
                if self.enter() {
                    self.code(End::Paren);
                }
                self.leave();
                self.in_substitution -= 1;
            }
            Some(b'{') => {
                self.i += 2;
                self.parameter(in_double);
            }
            Some(b'[') => {
                self.i += 2;
                self.arithmetic(Close::Bracket);
            }
            Some(b'\'') if !in_double => {
                self.i += 2;
                self.dollar_single_quoted();
            }
            Some(b'"') if !in_double => {
                self.i += 1;
                self.double_quoted(Some(Refusal::DollarDoubleQuote));
            }
            Some(c) if is_special_parameter(c) => self.i += 2,
            _ => self.i += 1,
        }
    }

    /// `${…}`, from after `${`. Every hole inside is refused.
    fn parameter(&mut self, in_double: bool) {
        let saved = self.force(Refusal::ParameterExpansion);
        if self.enter() {
            loop {
                if self.stopped.is_some() {
                    break;
                }
                if self.hole_here() {
                    self.place(Place::Code);
                    continue;
                }
                let Some(c) = self.byte(self.i) else {
                    self.stop(Refusal::Unterminated);
                    break;
                };
                match c {
                    b'}' => {
                        self.i += 1;
                        break;
                    }
                    b'\\' | b'\'' | b'"' if in_double => {
                        self.stop_after("a quote or backslash inside `${…}` within double quotes");
                        break;
                    }
                    b'\\' => {
                        self.i += if self.hole_at(self.i + 1) { 1 } else { 2 };
                        self.i = self.i.min(self.s.len());
                    }
                    b'\'' => self.single_quoted(),
                    b'"' => self.double_quoted(None),
                    b'`' => self.backquoted(),
                    b'$' => self.dollar(in_double),
                    _ => self.i += 1,
                }
            }
        }
        self.leave();
        self.forced = saved;
    }

    /// Backquotes, from the opening one: they end at the first unescaped backquote in both
    /// shells; every hole inside is refused.
    fn backquoted(&mut self) {
        self.i += 1;
        let saved = self.force(Refusal::Backquote);
        loop {
            if self.hole_here() {
                self.place(Place::Code);
                continue;
            }
            match self.byte(self.i) {
                None => {
                    self.stop(Refusal::Unterminated);
                    break;
                }
                Some(b'`') => {
                    self.i += 1;
                    break;
                }
                Some(b'\\') => {
                    self.i += if self.hole_at(self.i + 1) { 1 } else { 2 };
                    self.i = self.i.min(self.s.len());
                }
                Some(_) => self.i += 1,
            }
        }
        self.forced = saved;
    }

    /// `$'…'`, from after `$'`. Without a backslash both shells end it at the next `'`.
    fn dollar_single_quoted(&mut self) {
        let saved = self.force(Refusal::DollarSingleQuote);
        loop {
            if self.hole_here() {
                self.place(Place::Code);
                continue;
            }
            match self.byte(self.i) {
                None => {
                    self.stop(Refusal::Unterminated);
                    break;
                }
                Some(b'\\') => {
                    self.stop_after(
                        "a `$'…'` string with a backslash (bash and dash end it differently)",
                    );
                    break;
                }
                Some(b'\'') => {
                    self.i += 1;
                    break;
                }
                Some(_) => self.i += 1,
            }
        }
        self.forced = saved;
    }

    /// Arithmetic from after its opening: every hole refused; anything that could make dash
    /// and bash (or bash's arithmetic and command readings of `$((`) end it differently stops
    /// the lexer, so that no later hole is placed inside it by mistake.
    fn arithmetic(&mut self, close: Close) {
        let saved = self.force(Refusal::Arithmetic);
        let mut depth = 0usize;
        loop {
            if self.stopped.is_some() {
                break;
            }
            if self.hole_here() {
                self.place(Place::Code);
                continue;
            }
            let Some(c) = self.byte(self.i) else {
                self.stop(Refusal::Unterminated);
                break;
            };
            match (close, c) {
                (_, b'\'' | b'"' | b'`' | b'\\') => {
                    self.stop_after("a quote, backquote or backslash inside arithmetic");
                    break;
                }
                (_, b'$') => match self.byte(self.i + 1) {
                    _ if self.hole_at(self.i + 1) => self.i += 1,
                    Some(b'{') => match self.simple_parameter_end() {
                        Some(end) => self.i = end,
                        None => {
                            self.stop_after("a `${…}` with an operator inside arithmetic");
                            break;
                        }
                    },
                    Some(b'(' | b'[') => {
                        self.stop_after("a substitution inside arithmetic");
                        break;
                    }
                    _ => self.i += 1,
                },
                (Close::Bracket, b';' | b'&' | b'|' | b'<' | b'>' | b'#' | b'\n' | b'(' | b')') => {
                    // dash reads `$[` as plain text, where these are operators.
                    self.stop_after("an operator inside `$[…]`");
                    break;
                }
                (Close::DoubleParen, b'(') | (Close::Bracket, b'[') => {
                    depth += 1;
                    self.i += 1;
                }
                (Close::DoubleParen, b')') => {
                    if depth > 0 {
                        depth -= 1;
                        self.i += 1;
                    } else if self.next_is(1, b')') {
                        self.i += 2;
                        break;
                    } else {
                        self.stop_after("a `((` or `$((` that does not end with `))`");
                        break;
                    }
                }
                (Close::Bracket, b']') => {
                    self.i += 1;
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                }
                _ => self.i += 1,
            }
        }
        self.forced = saved;
    }

    /// At `$` of `${NAME}` (a name or one special parameter, nothing else, no hole): the
    /// index after its `}`.
    fn simple_parameter_end(&self) -> Option<usize> {
        let start = self.i + 2;
        let mut j = start;
        while let Some(b) = self.byte(j) {
            if self.holes.get(self.next).is_some_and(|&h| h <= j) {
                return None;
            }
            if b == b'}' {
                let inner = self.s.get(start..j)?;
                let simple = is_name(inner)
                    || (inner.len() == 1
                        && inner.first().is_some_and(|&b| is_special_parameter(b)))
                    || (!inner.is_empty() && inner.iter().all(u8::is_ascii_digit));
                return simple.then_some(j + 1);
            }
            j += 1;
        }
        None
    }
}

// ---- here-documents -------------------------------------------------------------------------

impl Lexer<'_> {
    /// After `<<` or `<<-`: the delimiter word.
    fn here_doc_operator(&mut self, strip_tabs: bool) {
        while matches!(self.byte(self.i), Some(b' ' | b'\t')) && !self.hole_at(self.i) {
            self.i += 1;
        }
        if self.in_substitution > 0 {
            self.stop_after("a here-document inside `$(…)`");
            return;
        }
        let mut delimiter = Vec::new();
        let mut quoted = false;
        loop {
            if self.hole_here() {
                self.refuse(Refusal::HereDocDelimiter);
                self.stop_after("a template in a here-document delimiter");
                return;
            }
            let Some(c) = self.byte(self.i) else { break };
            match c {
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>' => break,
                b'\'' | b'"' => {
                    quoted = true;
                    self.i += 1;
                    loop {
                        if self.hole_here() {
                            self.refuse(Refusal::HereDocDelimiter);
                            self.stop_after("a template in a here-document delimiter");
                            return;
                        }
                        match self.byte(self.i) {
                            None => {
                                self.stop(Refusal::Unterminated);
                                return;
                            }
                            Some(q) if q == c => {
                                self.i += 1;
                                break;
                            }
                            Some(b'\\' | b'$' | b'`') if c == b'"' => {
                                self.stop_after(
                                    "a here-document delimiter with `\\`, `$` or a backquote",
                                );
                                return;
                            }
                            Some(b) => {
                                delimiter.push(b);
                                self.i += 1;
                            }
                        }
                    }
                }
                b'\\' => {
                    quoted = true;
                    if self.hole_at(self.i + 1) {
                        self.i += 1;
                        self.refuse(Refusal::HereDocDelimiter);
                        self.stop_after("a template in a here-document delimiter");
                        return;
                    }
                    match self.byte(self.i + 1) {
                        Some(b'\n') | None => {
                            self.stop_after("a here-document delimiter ending in a backslash");
                            return;
                        }
                        Some(b) => {
                            delimiter.push(b);
                            self.i += 2;
                        }
                    }
                }
                b'$' | b'`' => {
                    self.stop_after("a here-document delimiter with `$` or a backquote");
                    return;
                }
                _ => {
                    delimiter.push(c);
                    self.i += 1;
                }
            }
        }
        if delimiter.is_empty() {
            self.stop_after("a here-document without a delimiter");
            return;
        }
        self.pending.push(HereDoc {
            delimiter,
            strip_tabs,
            quoted,
        });
    }

    /// At the start of the line after a newline in code: the bodies of the pending
    /// here-documents, in order. Both shells find a body's end on its raw lines.
    fn bodies(&mut self) {
        if !self.pending.is_empty() && self.in_substitution > 0 {
            self.stop_after("a here-document whose body would start inside `$(…)`");
            return;
        }
        for doc in std::mem::take(&mut self.pending) {
            loop {
                if self.stopped.is_some() {
                    return;
                }
                if self.i >= self.s.len() && !self.hole_here() {
                    // The text ends inside the body: both shells end it there.
                    return;
                }
                let line_end = self
                    .s
                    .get(self.i..)
                    .and_then(|rest| rest.iter().position(|&b| b == b'\n'))
                    .map_or(self.s.len(), |p| self.i + p);
                let hole_in_line = self.holes.get(self.next).is_some_and(|&h| h <= line_end);
                if !hole_in_line {
                    let mut line = self.s.get(self.i..line_end).unwrap_or_default();
                    if doc.strip_tabs {
                        while let [b'\t', rest @ ..] = line {
                            line = rest;
                        }
                    }
                    if line == doc.delimiter.as_slice() {
                        self.i = (line_end + 1).min(self.s.len());
                        break;
                    }
                }
                if doc.quoted {
                    while self.holes.get(self.next).is_some_and(|&h| h <= line_end) {
                        self.i = self.holes.get(self.next).copied().unwrap_or(line_end);
                        self.refuse(Refusal::QuotedHereDoc);
                    }
                } else {
                    self.body_line(line_end);
                }
                self.i = (line_end + 1).min(self.s.len());
                if line_end >= self.s.len() {
                    return;
                }
            }
        }
    }

    /// One line of an expanding body, up to `line_end` (its newline).
    fn body_line(&mut self, line_end: usize) {
        loop {
            if self.stopped.is_some() {
                return;
            }
            if self.hole_here() {
                self.place(Place::HereDoc);
                continue;
            }
            if self.i >= line_end {
                return;
            }
            let Some(c) = self.byte(self.i) else { return };
            match c {
                b'\\' => {
                    if self.hole_at(self.i + 1) {
                        self.i += 1;
                        self.refuse(Refusal::AfterBackslash);
                    } else if self.i + 1 >= line_end {
                        self.stop_after("a backslash at the end of a here-document line, which joins the next line to it");
                    } else {
                        self.i += 2;
                    }
                }
                b'$' => {
                    if self.hole_at(self.i + 1) {
                        self.i += 1;
                        continue;
                    }
                    match self.byte(self.i + 1) {
                        Some(b'(' | b'[') => self.stop_after(
                            "`$(`, `$((` or `$[` in a here-document body (dash and bash then find its end differently)",
                        ),
                        Some(b'{') => match self.simple_parameter_end() {
                            Some(end) if end <= line_end => self.i = end,
                            _ => self.stop_after("a `${…}` with an operator in a here-document body"),
                        },
                        _ => self.i += 1,
                    }
                }
                b'`' => self.stop_after(
                    "a backquote in a here-document body (dash and bash then find its end differently)",
                ),
                _ => self.i += 1,
            }
        }
    }
}
