//! Interim shell escaping for `${vars.X}` in shell text, until `spur_guards::shell_quote`
//! lands: each substitution is escaped for the quoting context at its position
//! (unquoted, inside "…", inside '…'), so a value is one literal string.

#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Unquoted,
    Double,
    Single,
}

/// Insert each `(offset, value)` into `literal` at `offset`, escaped for its context.
pub fn render_shell(
    literal: &str,
    substitutions: &[(std::ops::Range<usize>, String)],
) -> Result<String, std::convert::Infallible> {
    let mut out = String::with_capacity(literal.len() + 16);
    let mut ctx = Context::Unquoted;
    let mut escaped = false;
    let mut next = substitutions.iter().peekable();
    for (i, c) in literal.char_indices() {
        while let Some((at, value)) = next.peek() {
            if at.start != i {
                break;
            }
            out.push_str(&escape(value, ctx));
            next.next();
        }
        out.push(c);
        if escaped {
            escaped = false;
            continue;
        }
        ctx = match (ctx, c) {
            (Context::Unquoted, '\\') | (Context::Double, '\\') => {
                escaped = true;
                ctx
            }
            (Context::Unquoted, '\'') => Context::Single,
            (Context::Unquoted, '"') => Context::Double,
            (Context::Double, '"') | (Context::Single, '\'') => Context::Unquoted,
            (c, _) => c,
        };
    }
    for (_, value) in next {
        out.push_str(&escape(value, ctx));
    }
    Ok(out)
}

fn escape(value: &str, ctx: Context) -> String {
    match ctx {
        Context::Unquoted => format!("'{}'", value.replace('\'', r"'\''")),
        Context::Single => value.replace('\'', r"'\''"),
        Context::Double => {
            let mut s = String::with_capacity(value.len());
            for c in value.chars() {
                if matches!(c, '\\' | '"' | '$' | '`') {
                    s.push('\\');
                }
                s.push(c);
            }
            s
        }
    }
}
