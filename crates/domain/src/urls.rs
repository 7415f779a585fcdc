//! The URLs the API accepts for images a browser loads (catalogue logos, avatars): absolute,
//! `https` (a page served over TLS must not load mixed content) and short enough for a key-value
//! item and a log line.
//!
//! A URL is kept and served as its WHATWG serialisation ([`normalised_https_url`]), never as
//! sent: the parser forgives what a browser forgives (spaces and control characters around it,
//! tabs and newlines anywhere, `HTTPS:host`, backslashes) and percent-encodes quotes and angle
//! brackets, so the text that was checked is not the text that was sent. Serving the sent text
//! published markup to every viewer (the third outside test's G4); the serialisation starts with
//! `https://` and carries no character an HTML attribute or a CSS `url()` needs escaped.
//!
//! Refused beside the grammar, because a viewer's browser fetches the URL for them:
//! - a user or password (`https://user:pass@host/`): a credential on a public answer, and a
//!   host that reads as another (`https://cdn.example@tracker.example/`);
//! - an IP-literal host (v4 in any of its spellings, v6), a single-label host (`intranet`) and
//!   `localhost`: they point viewers' browsers at their own network, and a real image host has
//!   a domain name;
//! - an internationalised host (any `xn--` label, which is also how a non-ASCII host such as a
//!   Cyrillic `аpple.com` serialises): the homograph trick, and no image host needs one;
//! - a port other than 443: an image host does not need one, and a port lets a fan aim every
//!   viewer's browser at a service that is not a web server.

/// The longest URL, in bytes, as sent and as serialised.
pub const MAX_URL_BYTES: usize = 2048;

/// `text` as the URL the API stores and serves (its serialisation), or `None` when it is not an
/// absolute `https` URL of at most [`MAX_URL_BYTES`] bytes on a public domain name, without a
/// user, a password or a port (see the module's notes).
pub fn normalised_https_url(text: &str) -> Option<String> {
    if text.len() > MAX_URL_BYTES {
        return None;
    }
    let url = url::Url::parse(text).ok()?;
    let acceptable = url.scheme() == "https"
        && url.username().is_empty()
        && url.password().is_none()
        && url.port().is_none()
        && matches!(url.host(), Some(url::Host::Domain(host)) if is_public_domain(host));
    let serialised = String::from(url);
    (acceptable && serialised.len() <= MAX_URL_BYTES).then_some(serialised)
}

/// Whether `text` is accepted and already in its normal form (what an operator's file must
/// hold: what it says is what is served).
pub fn is_normalised_https_url(text: &str) -> bool {
    normalised_https_url(text).is_some_and(|normal| normal == text)
}

/// A host the parser left as a domain (ASCII, lowercase) of at least two labels, none empty, none
/// punycode, not `localhost`.
fn is_public_domain(host: &str) -> bool {
    let labels: Vec<&str> = host.split('.').collect();
    labels.len() >= 2
        && labels
            .iter()
            .all(|label| !label.is_empty() && !label.starts_with("xn--"))
        && labels.last() != Some(&"localhost")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_absolute_https_urls_of_at_most_2048_bytes() {
        assert!(is_normalised_https_url(
            "https://cdn.fan-api.example/teams/nba-lal.png"
        ));
        let longest = format!("https://a.example/{}", "x".repeat(MAX_URL_BYTES - 18));
        assert_eq!(longest.len(), MAX_URL_BYTES);
        assert!(is_normalised_https_url(&longest));
        assert_eq!(normalised_https_url(&format!("{longest}x")), None);
        // Within the limit as sent, beyond it once its quotes are percent-encoded.
        let grows = format!("https://a.example/{}", "\"".repeat(MAX_URL_BYTES - 18));
        assert_eq!(normalised_https_url(&grows), None);
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
            assert_eq!(normalised_https_url(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_url_is_kept_as_its_serialisation_never_as_sent() {
        for (sent, normal) in [
            ("HTTPS://CDN.EXAMPLE/a.png", "https://cdn.example/a.png"),
            ("https:cdn.example/a.png", "https://cdn.example/a.png"),
            (r"https:\\cdn.example\a.png", "https://cdn.example/a.png"),
            (" https://cdn.example/a.png", "https://cdn.example/a.png"),
            ("https://cdn.example/a.png\t", "https://cdn.example/a.png"),
            ("https://cdn.ex\tample/a.png", "https://cdn.example/a.png"),
            ("https://cdn.example:443/a.png", "https://cdn.example/a.png"),
            ("https://cdn.example", "https://cdn.example/"),
            (
                "https://cdn.example/a.png\n<script>",
                "https://cdn.example/a.png%3Cscript%3E",
            ),
            (
                " HTTPS:cdn.example/a.png?\"><img src=x onerror=alert(1)>",
                "https://cdn.example/a.png?%22%3E%3Cimg%20src=x%20onerror=alert(1)%3E",
            ),
            (
                "https://cdn.example/\"><img src=x onerror=alert(1)>",
                "https://cdn.example/%22%3E%3Cimg%20src=x%20onerror=alert(1)%3E",
            ),
        ] {
            assert_eq!(
                normalised_https_url(sent).as_deref(),
                Some(normal),
                "{sent:?}"
            );
            assert!(is_normalised_https_url(normal), "{normal}");
            assert!(!is_normalised_https_url(sent), "{sent:?}");
        }
    }

    #[test]
    fn userinfo_ip_literals_internal_and_international_hosts_and_ports_are_refused() {
        for (why, bad) in [
            ("userinfo", "https://user:pass@cdn.example/a.png"),
            ("userinfo", "https://user@cdn.example/a.png"),
            ("userinfo", "https://:pass@cdn.example/a.png"),
            ("IPv4", "https://127.0.0.1/a.png"),
            ("IPv4", "https://0x7f.1/a.png"),
            ("IPv4", "https://2130706433/a.png"),
            ("IPv6", "https://[::1]/a.png"),
            ("IPv6", "https://[2001:db8::1]/a.png"),
            ("internal", "https://localhost/a.png"),
            ("internal", "https://cdn.localhost/a.png"),
            ("internal", "https://intranet/a.png"),
            ("empty label", "https://cdn.example./a.png"),
            ("IDN", "https://\u{430}pple.com/a.png"),
            ("IDN", "https://xn--pple-43d.com/a.png"),
            ("IDN", "https://cdn.xn--80ak6aa92e.com/a.png"),
            ("port", "https://cdn.example:8443/a.png"),
            ("port", "https://cdn.example:80/a.png"),
        ] {
            assert_eq!(normalised_https_url(bad), None, "{why}: {bad:?}");
        }
    }
}
