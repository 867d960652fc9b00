//! The rules of `spur task check`, each with its layer, the reference's finding code
//! (`L3.solution-file-line`, in the JSON) and spur's diagnostic code
//! (`spur::task-check::solution-file-line`, in the rendered report).
//!
//! The layers are the reference's: L1 the frontmatter, L2 which sections the status
//! requires or forbids (the section matrix), L3 the format of each section, L4 the links
//! to other files (the feature).

use serde::Serialize;

use crate::diagnostic::Code;

/// Which layer a rule belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Layer {
    /// The frontmatter.
    L1,
    /// Section presence per status.
    L2,
    /// Section format.
    L3,
    /// Links to other files.
    L4,
}

macro_rules! rules {
    ($( $variant:ident = $layer:ident, $name:literal, $code:ident; )*) => {
        /// A rule of the check.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Rule {
            $( #[doc = $name] $variant, )*
        }

        impl Rule {
            /// Its layer.
            pub fn layer(self) -> Layer {
                match self { $( Rule::$variant => Layer::$layer, )* }
            }

            /// The reference's finding code, `L<n>.<name>`.
            pub fn finding_code(self) -> &'static str {
                match self { $( Rule::$variant => concat!(stringify!($layer), ".", $name), )* }
            }

            /// spur's diagnostic code.
            pub fn code(self) -> Code {
                match self { $( Rule::$variant => Code::$code, )* }
            }
        }
    };
}

rules! {
    FrontmatterMissing = L1, "frontmatter-missing", TaskCheckFrontmatterMissing;
    FrontmatterUnreadable = L1, "frontmatter-unreadable", TaskCheckFrontmatterUnreadable;
    NameMissing = L1, "name-missing", TaskCheckNameMissing;
    StatusMissing = L1, "status-missing", TaskCheckStatusMissing;
    StatusInvalid = L1, "status-invalid", TaskCheckStatusInvalid;
    FieldInvalid = L1, "field-invalid", TaskCheckFieldInvalid;
    MissingSection = L2, "missing-section", TaskCheckMissingSection;
    ForbiddenSection = L2, "forbidden-section", TaskCheckForbiddenSection;
    TaskFileShape = L3, "task-file", TaskCheckTaskFile;
    RequirementIds = L3, "requirement-ids", TaskCheckRequirementIds;
    RequirementsEmpty = L3, "requirements-empty", TaskCheckRequirementsEmpty;
    RequirementsFormat = L3, "requirements-format", TaskCheckRequirementsFormat;
    AcEmpty = L3, "ac-empty", TaskCheckAcEmpty;
    AcChecklist = L3, "ac-checklist", TaskCheckAcChecklist;
    SolutionFileLine = L3, "solution-file-line", TaskCheckSolutionFileLine;
    ReviewPriorityTable = L3, "review-priority-table", TaskCheckReviewPriorityTable;
    RequiredSectionPlaceholder = L3, "required-section-placeholder", TaskCheckRequiredSectionPlaceholder;
    PlanFormat = L3, "plan-format", TaskCheckPlanFormat;
    UncheckedChecklist = L3, "unchecked-checklist", TaskCheckUncheckedChecklist;
    ReviewTestingContradiction = L3, "review-testing-contradiction", TaskCheckReviewTestingContradiction;
    MissingFeatureId = L4, "missing-feature-id", TaskCheckMissingFeatureId;
    FeatureNotFound = L4, "feature-not-found", TaskCheckFeatureNotFound;
    DesignPlaceholder = L4, "design-placeholder", TaskCheckDesignPlaceholder;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finding_codes_carry_their_layer_and_diagnostic_codes_their_name() {
        assert_eq!(
            Rule::SolutionFileLine.finding_code(),
            "L3.solution-file-line"
        );
        assert_eq!(
            Rule::SolutionFileLine.code().to_string(),
            "spur::task-check::solution-file-line"
        );
        assert_eq!(Rule::MissingSection.layer(), Layer::L2);
    }
}
