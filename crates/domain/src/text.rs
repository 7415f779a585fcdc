//! Text that others read (a locker room's title, the catalogue's names): refused when it holds a
//! character that hides or reorders what a reader sees, so that what a fan shows is what every
//! viewer reads. Display names need none of this: they are ASCII letters, digits and `_.-`
//! ([`crate::profile::name`]); avatar URLs are served normalised ([`crate::urls`]).

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
use unicode_security::GeneralSecurityProfile;
use unicode_security::general_security_profile::IdentifierType;

/// The first character of `text` that hides or reorders what a reader sees, if any:
///
/// - a control character (`Cc`), a line or a paragraph separator (`Zl`, `Zp`): a line break
///   where the writer chose;
/// - a format character (`Cf`): bidi embeddings, overrides and isolates (U+202A-202E,
///   U+2066-2069) reorder what follows; zero-width spaces and joiners (U+200B-200D, U+2060,
///   U+FEFF) hide inside a word; tags (U+E0020-E007F) carry text nobody sees. A joiner inside an
///   emoji sequence (a family, some flags) is refused with them: telling the two apart takes
///   emoji data, and a title can show one emoji instead;
/// - any other default-ignorable code point (Unicode TR39's `Default_Ignorable`), but the
///   variation selectors: drawn as nothing, as the Hangul fillers (U+115F, U+1160, U+3164,
///   U+FFA0) that make "blank" names. A variation selector only picks a glyph's presentation
///   (U+FE0F draws ❤ as the red emoji) and stays.
pub fn hidden_char(text: &str) -> Option<char> {
    text.chars().find(|&c| is_hidden(c))
}

fn is_hidden(c: char) -> bool {
    matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    ) || (c.identifier_type() == Some(IdentifierType::Default_Ignorable)
        && !is_variation_selector(c))
}

/// The variation selectors: U+FE00-FE0F, their supplement U+E0100-E01EF and the Mongolian free
/// variation selectors U+180B-180D, U+180F.
fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}' | '\u{180B}'..='\u{180D}' | '\u{180F}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_controls_zero_width_and_invisible_characters_are_found() {
        for hidden in [
            '\u{0}',
            '\n',
            '\u{7f}',
            '\u{85}',
            '\u{ad}',
            '\u{34f}',
            '\u{61c}',
            '\u{115f}',
            '\u{1160}',
            '\u{180e}',
            '\u{200b}',
            '\u{200c}',
            '\u{200d}',
            '\u{200e}',
            '\u{200f}',
            '\u{2028}',
            '\u{2029}',
            '\u{202a}',
            '\u{202b}',
            '\u{202c}',
            '\u{202d}',
            '\u{202e}',
            '\u{2060}',
            '\u{2066}',
            '\u{2067}',
            '\u{2068}',
            '\u{2069}',
            '\u{3164}',
            '\u{feff}',
            '\u{ffa0}',
            '\u{fff9}',
            '\u{e0001}',
            '\u{e0020}',
            '\u{e007f}',
        ] {
            let text = format!("Rookie {hidden}gold");
            assert_eq!(hidden_char(&text), Some(hidden), "U+{:04X}", hidden as u32);
        }
    }

    #[test]
    fn visible_text_of_any_script_emoji_and_variation_selectors_pass() {
        for shown in [
            "Rookie gold",
            "Zoë's pulls: 1/2 — ½ done!",
            "Ελληνικά, русский, עברית, العربية, 日本語, 한국어",
            "🏀 Lakers ❤\u{fe0f} 🔥",
            "a\u{a0}b\u{2003}c",
            "e\u{301}",
        ] {
            assert_eq!(hidden_char(shown), None, "{shown}");
        }
    }
}
