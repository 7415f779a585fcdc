//! The addresses a delivery may never reach (SSRF): every address a webhook's host resolves to
//! is classified, and one that is not a public unicast address refuses the whole delivery.
//! IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum Special {
    Unspecified,
    Loopback,
    /// RFC 1918 and IPv6 unique local (fc00::/7).
    Private,
    /// 169.254/16 (the cloud metadata service, 169.254.169.254) and fe80::/10.
    LinkLocal,
    /// Carrier-grade NAT, 100.64/10.
    Shared,
    Multicast,
    Broadcast,
    /// 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32.
    Documentation,
    /// 198.18/15, 2001:2::/48.
    Benchmarking,
    /// IETF protocol assignments (192.0.0/24, 2001::/23 but Teredo's), 6to4 relays
    /// (192.88.99/24), 0/8, 240/4, discard-only (100::/64), site-local (fec0::/10), and any
    /// IPv6 outside global unicast (2000::/3).
    Reserved,
    /// Teredo (2001::/32): tunnels to an address it does not show.
    Tunnel,
}

/// Why `ip` may not be reached, or `None` when it is a public unicast address.
pub fn special(ip: IpAddr) -> Option<Special> {
    match ip {
        IpAddr::V4(ip) => special_v4(ip),
        IpAddr::V6(ip) => special_v6(ip),
    }
}

fn special_v4(ip: Ipv4Addr) -> Option<Special> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, ..) if ip.is_unspecified() => Special::Unspecified,
        (0, ..) => Special::Reserved,
        (127, ..) => Special::Loopback,
        (10, ..) | (192, 168, _) => Special::Private,
        (172, 16..=31, _) => Special::Private,
        (169, 254, _) => Special::LinkLocal,
        (100, 64..=127, _) => Special::Shared,
        (224..=239, ..) => Special::Multicast,
        (255, 255, 255) if ip.is_broadcast() => Special::Broadcast,
        (240..=255, ..) => Special::Reserved,
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => Special::Documentation,
        (198, 18..=19, _) => Special::Benchmarking,
        (192, 0, 0) | (192, 88, 99) => Special::Reserved,
        _ => return None,
    })
}

fn special_v6(ip: Ipv6Addr) -> Option<Special> {
    if let Some(v4) = embedded_v4(ip) {
        return special_v4(v4);
    }
    let s = ip.segments();
    Some(match s {
        _ if ip.is_unspecified() => Special::Unspecified,
        _ if ip.is_loopback() => Special::Loopback,
        [0xff00..=0xffff, ..] => Special::Multicast,
        [0xfc00..=0xfdff, ..] => Special::Private,
        [0xfe80..=0xfebf, ..] => Special::LinkLocal,
        [0x2001, 0x0db8, ..] => Special::Documentation,
        [0x2001, 0x0000, ..] => Special::Tunnel,
        [0x2001, 0x0002, 0x0000, ..] => Special::Benchmarking,
        [0x2001, 0x0000..=0x01ff, ..] => Special::Reserved,
        [0x2000..=0x3fff, ..] => return None,
        _ => Special::Reserved,
    })
}

/// The IPv4 address an IPv6 form carries: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d),
/// NAT64 (64:ff9b::/96) and 6to4 (2002:abcd:efgh::/16).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, ..] => Some(low),
        // ::1 and :: are IPv6's own; ::a.b.c.d (deprecated) carries the rest.
        [0, 0, 0, 0, 0, 0, ..] if !ip.is_loopback() && !ip.is_unspecified() => Some(low),
        [0x0064, 0xff9b, 0, 0, 0, 0, ..] => Some(low),
        [0x2002, high, low16, ..] => Some(Ipv4Addr::new(
            (high >> 8) as u8,
            high as u8,
            (low16 >> 8) as u8,
            low16 as u8,
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(text: &str) -> Option<Special> {
        special(text.parse().unwrap())
    }

    #[test]
    fn public_addresses_pass() {
        for public in [
            "93.184.216.34",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "2a00:1450::1",
        ] {
            assert_eq!(class(public), None, "{public}");
        }
    }

    #[test]
    fn every_special_class_is_refused() {
        let cases = [
            ("0.0.0.0", Special::Unspecified),
            ("0.1.2.3", Special::Reserved),
            ("127.0.0.1", Special::Loopback),
            ("127.255.0.9", Special::Loopback),
            ("10.1.2.3", Special::Private),
            ("172.16.0.1", Special::Private),
            ("172.31.255.255", Special::Private),
            ("192.168.1.1", Special::Private),
            ("169.254.169.254", Special::LinkLocal),
            ("100.64.0.1", Special::Shared),
            ("100.127.255.254", Special::Shared),
            ("224.0.0.1", Special::Multicast),
            ("239.255.255.250", Special::Multicast),
            ("255.255.255.255", Special::Broadcast),
            ("240.0.0.1", Special::Reserved),
            ("192.0.2.10", Special::Documentation),
            ("198.51.100.10", Special::Documentation),
            ("203.0.113.10", Special::Documentation),
            ("198.18.0.1", Special::Benchmarking),
            ("192.0.0.8", Special::Reserved),
            ("192.88.99.1", Special::Reserved),
            ("::", Special::Unspecified),
            ("::1", Special::Loopback),
            ("fc00::1", Special::Private),
            ("fd12:3456::1", Special::Private),
            ("fe80::1", Special::LinkLocal),
            ("ff02::1", Special::Multicast),
            ("2001:db8::1", Special::Documentation),
            ("2001::1", Special::Tunnel),
            ("2001:2::1", Special::Benchmarking),
            ("2001:10::1", Special::Reserved),
            ("fec0::1", Special::Reserved),
            ("100::1", Special::Reserved),
            // IPv4 in IPv6 clothing: judged by the IPv4 address.
            ("::ffff:127.0.0.1", Special::Loopback),
            ("::ffff:169.254.169.254", Special::LinkLocal),
            ("::ffff:10.0.0.1", Special::Private),
            ("::127.0.0.1", Special::Loopback),
            ("64:ff9b::a9fe:a9fe", Special::LinkLocal),
            ("2002:7f00:1::1", Special::Loopback),
            ("2002:c0a8:101::1", Special::Private),
        ];
        for (address, expected) in cases {
            assert_eq!(class(address), Some(expected), "{address}");
        }
        assert_eq!(class("::ffff:8.8.8.8"), None);
        assert_eq!(class("64:ff9b::808:808"), None);
    }
}
