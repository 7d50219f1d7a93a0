//! How pi's session picker shows a session (docs/pi-format.md §8.1): how long ago it was active.

/// pi's picker age: now, Nm, Nh, Nd, Nw, Nmo, Ny.
pub fn age(ms: i64, now_ms: i64) -> String {
    let mins = (now_ms - ms).max(0) / 60_000;
    match mins {
        0 => "now".into(),
        m if m < 60 => format!("{m}m"),
        m if m < 60 * 24 => format!("{}h", m / 60),
        m if m < 60 * 24 * 7 => format!("{}d", m / (60 * 24)),
        m if m < 60 * 24 * 30 => format!("{}w", m / (60 * 24 * 7)),
        m if m < 60 * 24 * 365 => format!("{}mo", m / (60 * 24 * 30)),
        m => format!("{}y", m / (60 * 24 * 365)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_like_the_picker() {
        let now = 1_000_000_000_000;
        assert_eq!(age(now - 30_000, now), "now");
        assert_eq!(age(now - 5 * 60_000, now), "5m");
        assert_eq!(age(now - 3 * 3_600_000, now), "3h");
        assert_eq!(age(now - 40 * 86_400_000, now), "1mo");
    }
}
