//! Expected texts are RFC 8785's (section 3.2.3 and appendix B) and, for the cases it leaves
//! out, what Node.js gives for `canonicalize(JSON.parse(text))`.

use super::*;

fn canonical(json: &str) -> String {
    canonical_json(json).unwrap()
}

#[test]
fn numbers_are_written_as_javascript_writes_doubles() {
    // RFC 8785 appendix B: IEEE 754 bits and their text.
    let cases = [
        (0x0000000000000000_u64, "0"),
        (0x8000000000000000, "0"),
        (0x0000000000000001, "5e-324"),
        (0x8000000000000001, "-5e-324"),
        (0x7fefffffffffffff, "1.7976931348623157e+308"),
        (0xffefffffffffffff, "-1.7976931348623157e+308"),
        (0x4340000000000000, "9007199254740992"),
        (0xc340000000000000, "-9007199254740992"),
        (0x4430000000000000, "295147905179352830000"),
        (0x44b52d02c7e14af5, "9.999999999999997e+22"),
        (0x44b52d02c7e14af6, "1e+23"),
        (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
        (0x444b1ae4d6e2ef4e, "999999999999999700000"),
        (0x444b1ae4d6e2ef4f, "999999999999999900000"),
        (0x444b1ae4d6e2ef50, "1e+21"),
        (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
        (0x3eb0c6f7a0b5ed8d, "0.000001"),
        (0x41b3de4355555553, "333333333.3333332"),
        (0x41b3de4355555554, "333333333.33333325"),
        (0x41b3de4355555555, "333333333.3333333"),
        (0x41b3de4355555556, "333333333.3333334"),
        (0x41b3de4355555557, "333333333.33333343"),
        (0xbecbf647612f3696, "-0.0000033333333333333333"),
        (0x43143ff3c1cb0959, "1424953923781206.2"),
    ];
    for (bits, expected) in cases {
        let mut out = String::new();
        write_number(f64::from_bits(bits), &mut out);
        assert_eq!(out, expected, "{bits:016x}");
    }
    assert_eq!(
        canonical(
            "[1e400, -1e400, -0, -0.0, 1.0, 100, 1E21, 1e-7, 123456789012345678901234567890, 9007199254740993]"
        ),
        "[null,null,0,0,1,100,1e+21,1e-7,1.2345678901234568e+29,9007199254740992]"
    );
}

#[test]
fn the_rfc_example_is_canonicalised() {
    // RFC 8785 section 3.2.3: whitespace, member order, escapes and numbers at once.
    let input = r#"{
        "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
        "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
        "literals": [null, true, false]
    }"#;
    assert_eq!(
        canonical(input),
        r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
    );
}

#[test]
fn members_sort_by_utf16_code_units_not_utf8_bytes() {
    let input = r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}"#;
    assert_eq!(
        canonical(input),
        "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}"
    );
    // By UTF-8 bytes U+FB01 would come first; by UTF-16 the emoji's surrogates do.
    assert_eq!(canonical(r#"{"\ufb01":1,"😀":2}"#), r#"{"😀":2,"ﬁ":1}"#);
}

#[test]
fn one_value_has_one_text_whatever_its_spelling() {
    let spellings = [
        r#"{"chain":"eip155:1","address":"0xAbC","tags":["a",1]}"#,
        "\n{ \"tags\" : [ \"\\u0061\" , 1.0 ] ,\r\n\t\"address\":\"0x\\u0041bC\", \"chain\": \"eip155:1\" }  ",
        r#"{"address":"0xAbC","tags":["a",10e-1],"chain":"eip155\u003a1"}"#,
    ];
    for spelling in spellings {
        assert_eq!(
            canonical(spelling),
            r#"{"address":"0xAbC","chain":"eip155:1","tags":["a",1]}"#,
            "{spelling}"
        );
    }
    assert_eq!(
        canonical(r#"{"b":{"d":[],"c":{}},"a":"x"}"#),
        r#"{"a":"x","b":{"c":{},"d":[]}}"#
    );
}

#[test]
fn strings_escape_only_what_json_stringify_escapes() {
    assert_eq!(
        canonical(r#"["\u007f\u2028\u001f\b\f\t\/", "é\u00e9"]"#),
        "[\"\u{7f}\u{2028}\\u001f\\b\\f\\t/\",\"éé\"]"
    );
}

#[test]
fn what_i_json_leaves_out_is_given_javascripts_text() {
    assert_eq!(canonical(r#"{"a":1,"b":0,"a":2}"#), r#"{"a":2,"b":0}"#);
    assert_eq!(
        canonical(r#"["\ud800","\udc00x","\uD83D\uDE00"]"#),
        r#"["\ud800","\udc00x","😀"]"#
    );
}

#[test]
fn malformed_or_too_deep_texts_have_no_canonical_form() {
    for bad in [
        "",
        " ",
        "{",
        "[1,]",
        "{\"a\"}",
        "{\"a\":1,}",
        "{a:1}",
        "01",
        "1.",
        ".5",
        "-",
        "1e",
        "+1",
        "tru",
        "nul",
        "\"\\x\"",
        "\"\\u12\"",
        "\"a\u{1}\"",
        "\"open",
        "1 2",
        "[1]x",
        "NaN",
        "Infinity",
    ] {
        assert_eq!(canonical_json(bad), Err(CanonicalError::Syntax), "{bad:?}");
    }
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert!(canonical_json(&nested(MAX_PAYLOAD_DEPTH)).is_ok());
    assert_eq!(
        canonical_json(&nested(MAX_PAYLOAD_DEPTH + 1)),
        Err(CanonicalError::TooDeep)
    );
    assert_eq!(canonical("  true "), "true");
}

proptest::proptest! {
    #[test]
    fn every_double_is_written_in_digits_that_read_back_to_it(bits in proptest::num::u64::ANY) {
        let number = f64::from_bits(bits);
        proptest::prop_assume!(number.is_finite());
        let mut out = String::new();
        write_number(number, &mut out);
        let back: f64 = out.parse().unwrap();
        proptest::prop_assert!(back == number, "{} read back as {}", out, back);
        proptest::prop_assert_eq!(canonical(&out), out);
    }
}
