//! Why the editor left a method as it was. Callers count and report
//! refusals by cause ([`EditError::cause`]); `Display` gives the detail.

use crate::code::EncodeError;
use std::fmt;

/// A refusal: the method is unchanged. Variants are the distinct causes;
/// their payload is the detail for a message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EditError {
    /// The class has no method at that index.
    NoSuchMethod,
    /// An abstract or native method: there is no code to edit.
    NoCode,
    /// The code or one of its tables does not read, or contradicts itself
    /// (jumps between instructions, a bad descriptor, stack underflow…).
    Malformed(String),
    /// The edit asks for something this method cannot take: code after an
    /// instruction that does not fall through, a new local over the
    /// method's own. A mistake of the caller's, not of the class.
    BadEdit(String),
    /// A constructor whose super()/this() call cannot be located, so the
    /// catch-all cannot be split around it (the detail says why).
    Constructor(String),
    /// Values or types the editor must follow cannot be: code after a
    /// `jsr`/`ret` subroutine, mostly.
    Unfollowable(String),
    /// The edited code would be this many bytes, over the JVM's 65,535.
    TooLarge(usize),
    /// A nested attribute of `Code` (by name) holds offsets that profrj
    /// cannot remap, so it would be stale after the edit.
    UnknownAttribute(String),
    /// A conditional pushed out of 16-bit reach in a method without a
    /// StackMapTable (the frame its widening needs would need all others).
    WideningWithoutFrames,
    /// The encoder failed otherwise: a label without position, a layout for
    /// other code. A bug of the editor's.
    Encode(EncodeError),
}

impl EditError {
    /// A short name of the cause, the same for every refusal of this kind
    /// (unlike `Display`, which names instructions and offsets).
    pub fn cause(&self) -> &'static str {
        match self {
            Self::NoSuchMethod => "no such method",
            Self::NoCode => "no code",
            Self::Malformed(_) => "malformed code",
            Self::BadEdit(_) => "edit does not fit the method",
            Self::Constructor(_) => "constructor not followed",
            Self::Unfollowable(_) => "values cannot be followed",
            Self::TooLarge(_) => "code too large after editing",
            Self::UnknownAttribute(_) => "Code attribute with offsets",
            Self::WideningWithoutFrames => "widening without a StackMapTable",
            Self::Encode(_) => "encoder error",
        }
    }
}

impl From<EncodeError> for EditError {
    fn from(e: EncodeError) -> Self {
        match e {
            EncodeError::TooLong(n) => Self::TooLarge(n),
            e => Self::Encode(e),
        }
    }
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchMethod => f.write_str("no such method"),
            Self::NoCode => f.write_str("no code (abstract or native)"),
            Self::Malformed(why) | Self::BadEdit(why) | Self::Unfollowable(why) => f.write_str(why),
            Self::Constructor(why) => write!(f, "constructor: {why}"),
            Self::TooLarge(n) => EncodeError::TooLong(*n).fmt(f),
            Self::UnknownAttribute(name) => {
                write!(
                    f,
                    "Code attribute {name} refers to offsets profrj cannot remap"
                )
            }
            Self::WideningWithoutFrames => f.write_str(
                "a conditional branch would need widening in a method without a StackMapTable",
            ),
            Self::Encode(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for EditError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_the_details_and_causes_group_them() {
        let a = EditError::Malformed("instruction 3: stack underflow".into());
        let b = EditError::Malformed("line entry at 7, not an instruction".into());
        assert_eq!(a.to_string(), "instruction 3: stack underflow");
        assert_eq!(a.cause(), b.cause());
        let c = EditError::Constructor("no super()/this() call found".into());
        assert_eq!(c.to_string(), "constructor: no super()/this() call found");
        assert_ne!(c.cause(), a.cause());
        let big = EditError::from(EncodeError::TooLong(70_000));
        assert_eq!(big, EditError::TooLarge(70_000));
        assert_eq!(big.to_string(), EncodeError::TooLong(70_000).to_string());
        let bug = EditError::from(EncodeError::UnboundLabel(4));
        assert_eq!(bug.to_string(), "label 4 is bound to no instruction");
        assert_eq!(
            EditError::UnknownAttribute("Foo".into()).to_string(),
            "Code attribute Foo refers to offsets profrj cannot remap"
        );
    }
}
