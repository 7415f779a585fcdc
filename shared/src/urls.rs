//! The URLs the API accepts for images a browser loads (catalogue logos, avatars): absolute,
//! `https` (a page served over TLS must not load mixed content) and short enough for a key-value
//! item and a log line.

/// The longest URL, in bytes.
pub const MAX_URL_BYTES: usize = 2048;

/// Whether `text` is an absolute `https` URL with a host, of at most [`MAX_URL_BYTES`] bytes.
pub fn is_https_url(text: &str) -> bool {
    text.len() <= MAX_URL_BYTES
        && url::Url::parse(text).is_ok_and(|url| url.scheme() == "https" && url.has_host())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_absolute_https_urls_of_at_most_2048_bytes() {
        assert!(is_https_url(
            "https://cdn.fan-api.example/teams/nba-lal.png"
        ));
        let longest = format!("https://a.example/{}", "x".repeat(MAX_URL_BYTES - 18));
        assert_eq!(longest.len(), MAX_URL_BYTES);
        assert!(is_https_url(&longest));
        assert!(!is_https_url(&format!("{longest}x")));
        for bad in [
            "",
            "http://cdn.fan-api.example/a.png",
            "//cdn.fan-api.example/a.png",
            "/teams/a.png",
            "https://",
            "data:image/png;base64,AAAA",
            "javascript:alert(1)",
            "https://exa mple.com/",
        ] {
            assert!(!is_https_url(bad), "{bad:?}");
        }
    }
}
