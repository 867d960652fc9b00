//! [`coded_diagnostic!`]: the `miette::Diagnostic` impl of an error type, written as one
//! table of variant → [`Code`](super::Code) and help. miette's derive takes a code only
//! as a literal, so it cannot name the enum; `thiserror` still derives `Display` and `source`.

/// Implements `miette::Diagnostic` for an error type from a table of arms
/// `pattern => Code::X [, help("format", args…)] [, related(diagnostics)];`.
/// A `forward { Variant, … }` section names single-field tuple variants whose diagnostic is
/// the wrapped error's own (code, help, labels, everything), as miette's `transparent`.
macro_rules! coded_diagnostic {
    (@help) => { None };
    (@help $($format:tt)+) => { Some(Box::new(format!($($format)+))) };
    (@related) => { None };
    (@related $related:expr) => {
        Some(Box::new($related.iter().map(|d| d as &dyn miette::Diagnostic)))
    };

    (
        $ty:ty {
            forward { $( $forward:ident ),+ $(,)? }
            $( $pat:pat => $code:expr $(, help($($help:tt)+))? ; )*
        }
    ) => {
        impl $ty {
            /// The wrapped error whose diagnostic this one is, for a forwarded variant.
            // Unreachable when every variant is forwarded.
            #[allow(unreachable_patterns)]
            fn forwarded(&self) -> Option<&dyn miette::Diagnostic> {
                match self {
                    $( Self::$forward(inner) => Some(inner), )+
                    _ => None,
                }
            }
        }

        impl miette::Diagnostic for $ty {
            #[allow(unused_variables)]
            fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
                match self {
                    $( Self::$forward(inner) => inner.code(), )+
                    $( $pat => Some(Box::new($code)), )*
                }
            }

            #[allow(unused_variables)]
            fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
                match self {
                    $( Self::$forward(inner) => inner.help(), )+
                    $( $pat => $crate::diagnostic::coded_diagnostic!(@help $($($help)+)?), )*
                }
            }

            fn severity(&self) -> Option<miette::Severity> {
                self.forwarded().and_then(|d| d.severity())
            }

            fn url<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
                self.forwarded().and_then(|d| d.url())
            }

            fn source_code(&self) -> Option<&dyn miette::SourceCode> {
                self.forwarded().and_then(|d| d.source_code())
            }

            fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
                self.forwarded().and_then(|d| d.labels())
            }

            fn related<'a>(
                &'a self,
            ) -> Option<Box<dyn Iterator<Item = &'a dyn miette::Diagnostic> + 'a>> {
                self.forwarded().and_then(|d| d.related())
            }

            fn diagnostic_source(&self) -> Option<&dyn miette::Diagnostic> {
                self.forwarded().and_then(|d| d.diagnostic_source())
            }
        }
    };

    (
        $ty:ty {
            $( $pat:pat => $code:expr $(, help($($help:tt)+))? $(, related($related:expr))? ; )+
        }
    ) => {
        impl miette::Diagnostic for $ty {
            #[allow(unused_variables)]
            fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
                match self {
                    $( $pat => Some(Box::new($code)), )+
                }
            }

            #[allow(unused_variables)]
            fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
                match self {
                    $( $pat => $crate::diagnostic::coded_diagnostic!(@help $($($help)+)?), )+
                }
            }

            #[allow(unused_variables)]
            fn related<'a>(
                &'a self,
            ) -> Option<Box<dyn Iterator<Item = &'a dyn miette::Diagnostic> + 'a>> {
                match self {
                    $( $pat => $crate::diagnostic::coded_diagnostic!(@related $($related)?), )+
                }
            }
        }
    };
}

pub(crate) use coded_diagnostic;
