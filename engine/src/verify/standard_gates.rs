//! The six standard gates (build → tests → security, wiring → semantic → spec) and the
//! defaults a gate of that name gets when the user enables it by name.

/// Defaults of one standard gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StandardGate {
    pub(crate) name: &'static str,
    pub(crate) needs: &'static [&'static str],
    pub(crate) read_only: bool,
}

/// In dependency order: build and tests may change the working tree (they compile, write
/// caches); the four review gates only read it, so they may run side by side.
pub(crate) const STANDARD_GATES: [StandardGate; 6] = [
    StandardGate {
        name: "build",
        needs: &[],
        read_only: false,
    },
    StandardGate {
        name: "tests",
        needs: &["build"],
        read_only: false,
    },
    StandardGate {
        name: "security",
        needs: &["tests"],
        read_only: true,
    },
    StandardGate {
        name: "wiring",
        needs: &["tests"],
        read_only: true,
    },
    StandardGate {
        name: "semantic",
        needs: &["security", "wiring"],
        read_only: true,
    },
    StandardGate {
        name: "spec",
        needs: &["semantic"],
        read_only: true,
    },
];

pub(crate) fn standard_gate(name: &str) -> Option<&'static StandardGate> {
    STANDARD_GATES.iter().find(|g| g.name == name)
}
