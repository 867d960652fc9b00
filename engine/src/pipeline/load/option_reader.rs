//! Reading the `options` of a built-in kind into its typed options struct. Each struct's
//! `read` asks for its options by name; what it asks for is what the kind knows, so a
//! required option that is not written is recorded (for the checker to report) and any
//! option it never asked for is a warning with did-you-mean — one list of names per kind,
//! in its `read`, and no table beside it.

use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::pipeline::guard_kind::GuardKind;
use crate::pipeline::model::{Guard, OptionValue, Options};
use crate::pipeline::templated::{Templated, WrittenType};
use crate::source::{Located, SourceFile, Span};

/// The options of one action or guard (or one nested mapping of them) being read.
pub(crate) struct OptionReader<'a> {
    source: &'a SourceFile,
    out: &'a mut Vec<Diagnostic>,
    /// "action" or "guard".
    what: &'static str,
    kind: &'a Located<String>,
    options: &'a Options,
    /// The path to a nested mapping (`retry.`), empty at the top.
    prefix: String,
    /// Options the kind reads, for did-you-mean.
    listed: Vec<&'static str>,
    /// Options the kind accepts without reading them (or under another spelling).
    unlisted: Vec<&'static str>,
    /// A plugin's options: any name goes.
    free_form: bool,
    /// Report nothing (a value the checker does not look into).
    quiet: bool,
    /// Required options that are not written.
    missing: Vec<String>,
}

impl<'a> OptionReader<'a> {
    pub(crate) fn new(
        source: &'a SourceFile,
        out: &'a mut Vec<Diagnostic>,
        what: &'static str,
        kind: &'a Located<String>,
        options: &'a Options,
    ) -> Self {
        Self {
            source,
            out,
            what,
            kind,
            options,
            prefix: String::new(),
            listed: Vec::new(),
            unlisted: Vec::new(),
            free_form: false,
            quiet: false,
            missing: Vec::new(),
        }
    }

    /// An option the kind cannot work without; when missing, recorded, and a null
    /// placeholder (the checker reports it, and a pipeline with errors never runs).
    pub(crate) fn required<T: WrittenType>(&mut self, key: &'static str) -> Templated<T> {
        match self.required_value(key) {
            Some(value) => self.typed(key, value),
            None => Templated::new(key, OptionValue::Null(self.kind.span)),
        }
    }

    pub(crate) fn optional<T: WrittenType>(&mut self, key: &'static str) -> Option<Templated<T>> {
        self.value(key).map(|v| self.typed(key, v))
    }

    /// Like [`OptionReader::optional`], but not offered as a spelling.
    pub(crate) fn unlisted<T: WrittenType>(&mut self, key: &'static str) -> Option<Templated<T>> {
        self.unlisted.push(key);
        self.options.get(key).map(|v| self.typed(key, v))
    }

    /// Option `key` as written; a value without templates that cannot be a `T` is an error
    /// now (a templated one is settled when its step runs).
    fn typed<T: WrittenType>(&mut self, key: &'static str, value: &OptionValue) -> Templated<T> {
        let json = value.to_json();
        if !self.quiet && !json.to_string().contains("${") {
            if let Err(problem) = T::check_written(json) {
                let d = Diagnostic::error(
                    Code::CheckOptionType,
                    self.source,
                    value.span(),
                    format!(
                        "option `{}{key}` of {} `{}` {problem}",
                        self.prefix, self.what, self.kind.value
                    ),
                )
                .label("as written")
                .help(
                    "a step with this value could only fail when it runs; \
                     a templated value (`${vars.x}`) is checked then instead",
                );
                self.out.push(d);
            }
        }
        Templated::new(key, value.clone())
    }

    /// Options the kind accepts and does nothing with.
    pub(crate) fn ignore(&mut self, keys: &[&'static str]) {
        self.unlisted.extend_from_slice(keys);
    }

    /// The value of an option as written.
    pub(crate) fn value(&mut self, key: &'static str) -> Option<&'a OptionValue> {
        self.listed.push(key);
        self.options.get(key)
    }

    /// Like [`OptionReader::value`], and a missing option is recorded.
    pub(crate) fn required_value(&mut self, key: &'static str) -> Option<&'a OptionValue> {
        let value = self.value(key);
        if value.is_none() {
            self.missing.push(format!("{}{key}", self.prefix));
        }
        value
    }

    /// A nested mapping of options (`retry: {…}`); `None` when absent or not a mapping.
    pub(crate) fn map(&mut self, key: &'static str) -> Option<OptionReader<'_>> {
        let Some(OptionValue::Map(options)) = self.value(key) else {
            return None;
        };
        Some(OptionReader {
            source: self.source,
            out: &mut *self.out,
            what: self.what,
            kind: self.kind,
            options,
            prefix: format!("{}{key}.", self.prefix),
            listed: Vec::new(),
            unlisted: Vec::new(),
            free_form: false,
            quiet: self.quiet,
            missing: Vec::new(),
        })
    }

    /// A guard written inside these options (`guards:` of a combinator), typed.
    pub(crate) fn guard(&mut self, kind: &Located<String>, options: Options, span: Span) -> Guard {
        let mut nested = OptionReader::new(self.source, &mut *self.out, "guard", kind, &options);
        nested.quiet = self.quiet;
        let typed = GuardKind::read(&kind.value, &mut nested);
        let missing_options = nested.finish();
        Guard {
            kind: Located::new(typed, kind.span),
            options,
            missing_options,
            span,
        }
    }

    /// Run `read` without reporting anything.
    pub(crate) fn quietly<R>(&mut self, read: impl FnOnce(&mut Self) -> R) -> R {
        let was = std::mem::replace(&mut self.quiet, true);
        let result = read(self);
        self.quiet = was;
        result
    }

    /// The options of a plugin: whatever it is given.
    pub(crate) fn free_form(&mut self) {
        self.free_form = true;
    }

    /// Warn about every option the kind did not ask for; the required options that are
    /// not written.
    pub(crate) fn finish(self) -> Vec<String> {
        if self.free_form || self.quiet {
            return self.missing;
        }
        for (key, _) in &self.options.entries {
            let name = key.value.as_str();
            if self.listed.contains(&name) || self.unlisted.contains(&name) {
                continue;
            }
            let kind = &self.kind.value;
            let listed: Vec<String> = self
                .listed
                .iter()
                .map(|k| format!("`{}{k}`", self.prefix))
                .collect();
            let help = match did_you_mean(name, self.listed.iter().copied()) {
                Some(s) => format!("did you mean `{}{s}`?", self.prefix),
                None if listed.is_empty() => format!("`{kind}` takes no options"),
                None => format!("options of `{kind}`: {}", listed.join(", ")),
            };
            let d = Diagnostic::warning(
                Code::CheckUnknownOption,
                self.source,
                key.span,
                format!(
                    "unknown option `{}{name}` of {} `{kind}`",
                    self.prefix, self.what
                ),
            )
            .label("ignored")
            .help(help);
            self.out.push(d);
        }
        self.missing
    }
}
