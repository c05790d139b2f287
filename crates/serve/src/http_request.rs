//! The request side of the exporter's HTTP server: where a head ends,
//! what it asks for, and the bytes of a reply. Pure functions, tested here.

/// Headers parsed; more is refused with 431.
const HEADERS_MAX: usize = 32;

/// Where the head ends: after `\r\n\r\n`, or after a bare `\n\n` (or
/// `\n\r\n`), which RFC 9112 lets a server accept.
pub(super) fn head_end(head: &[u8]) -> Option<usize> {
    head.windows(2).enumerate().find_map(|(i, w)| match w {
        [b'\n', b'\n'] => Some(i + 2),
        [b'\n', b'\r'] if head.get(i + 2) == Some(&b'\n') => Some(i + 3),
        _ => None,
    })
}

/// The exposition formats /metrics speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// OpenMetrics 1.0, for a scraper that lists
    /// `application/openmetrics-text` in its Accept header (Prometheus
    /// does, first, since 2.5).
    OpenMetrics,
    /// The Prometheus text format 0.0.4, for everyone else (curl, a
    /// scraper that asks for `text/plain` or sends no Accept at all).
    PrometheusText,
}

/// What a complete head asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Asked {
    /// HEAD: the reply without its body.
    pub head_only: bool,
    /// The path without its query.
    pub path: String,
    pub format: Format,
}

/// Media ranges looked at in all Accept headers together; the rest are
/// ignored, so a huge header costs no more than this.
const MEDIA_RANGES_MAX: usize = 64;

/// The format the Accept headers prefer: OpenMetrics when it is acceptable
/// (q above 0) and weighed at least as high as any range that covers
/// `text/plain`; the 0.0.4 text otherwise.
fn negotiate<'a>(accept: impl Iterator<Item = &'a [u8]>) -> Format {
    let (mut openmetrics_q, mut text_q) = (0.0f32, 0.0f32);
    let ranges = accept
        .filter_map(|value| std::str::from_utf8(value).ok())
        .flat_map(|value| value.split(','))
        .take(MEDIA_RANGES_MAX);
    for range in ranges {
        let mut parts = range.split(';').map(str::trim);
        let media = parts.next().unwrap_or("").to_ascii_lowercase();
        let q = parts
            .find_map(|p| p.strip_prefix("q=").or_else(|| p.strip_prefix("Q=")))
            .map_or(Some(1.0), |q| q.parse::<f32>().ok().filter(|q| (0.0..=1.0).contains(q)))
            .unwrap_or(0.0);
        match media.as_str() {
            "application/openmetrics-text" => openmetrics_q = openmetrics_q.max(q),
            "text/plain" | "text/*" | "*/*" => text_q = text_q.max(q),
            _ => {}
        }
    }
    if openmetrics_q > 0.0 && openmetrics_q >= text_q {
        Format::OpenMetrics
    } else {
        Format::PrometheusText
    }
}

/// Method, path and format of a complete head, or the status that refuses it.
pub(super) fn route(head: &[u8]) -> Result<Asked, (u16, &'static str)> {
    let mut headers = [httparse::EMPTY_HEADER; HEADERS_MAX];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Err(httparse::Error::TooManyHeaders) => return Err((431, "too many headers\n")),
        _ => return Err((400, "bad request\n")),
    }
    let (Some(method), Some(path)) = (request.method, request.path) else {
        return Err((400, "bad request\n"));
    };
    let head_only = match method {
        "GET" => false,
        "HEAD" => true,
        _ => return Err((405, "only GET and HEAD\n")),
    };
    let accept = request
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("accept"))
        .map(|h| h.value);
    Ok(Asked {
        head_only,
        path: path.split('?').next().unwrap_or("").to_string(),
        format: negotiate(accept),
    })
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

pub(super) fn response(code: u16, content_type: &str, body: &str, head_only: bool) -> Vec<u8> {
    let mut reply = format!(
        "HTTP/1.1 {code} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        reason(code),
        body.len()
    )
    .into_bytes();
    if !head_only {
        reply.extend_from_slice(body.as_bytes());
    }
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(head_only: bool, path: &str, format: Format) -> Asked {
        Asked {
            head_only,
            path: path.to_string(),
            format,
        }
    }

    #[test]
    fn routes_and_refusals() {
        assert_eq!(
            route(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n"),
            Ok(asked(false, "/metrics", Format::PrometheusText))
        );
        assert_eq!(
            route(b"HEAD / HTTP/1.0\r\n\r\n"),
            Ok(asked(true, "/", Format::PrometheusText))
        );
        assert_eq!(
            route(b"GET /metrics HTTP/1.1\nHost: a\n\n"),
            Ok(asked(false, "/metrics", Format::PrometheusText))
        );
        assert!(matches!(route(b"POST /metrics HTTP/1.1\r\n\r\n"), Err((405, _))));
        assert!(matches!(route(b"\x00\x01garbage\r\n\r\n"), Err((400, _))));
        let many = format!("GET / HTTP/1.1\r\n{}\r\n", "A: b\r\n".repeat(HEADERS_MAX + 1));
        assert!(matches!(route(many.as_bytes()), Err((431, _))));
    }

    fn format_for(accept: &str) -> Format {
        let head = format!("GET /metrics HTTP/1.1\r\nAccept: {accept}\r\n\r\n");
        route(head.as_bytes()).unwrap().format
    }

    #[test]
    fn openmetrics_only_for_a_scraper_that_prefers_it() {
        // What Prometheus 2.42 sends (scrape/scrape.go, scrapeAcceptHeader).
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;\
                          q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(format_for(prometheus), Format::OpenMetrics);
        assert_eq!(
            format_for("APPLICATION/OpenMetrics-Text; version=1.0.0"),
            Format::OpenMetrics
        );
        // curl, a browser, node_exporter-style scrapers, refusals.
        for accept in [
            "*/*",
            "text/plain;version=0.0.4",
            "text/html,application/xhtml+xml,*/*;q=0.8",
            "application/openmetrics-text;q=0",
            "application/openmetrics-text;q=0.2,text/plain;q=0.9",
            "application/openmetrics-text;q=nonsense",
        ] {
            assert_eq!(format_for(accept), Format::PrometheusText, "{accept}");
        }
        // Past the cap of media ranges nothing more is looked at.
        let long = format!("{}application/openmetrics-text", "x/y,".repeat(MEDIA_RANGES_MAX));
        assert_eq!(format_for(&long), Format::PrometheusText);
    }

    #[test]
    fn a_head_ends_at_a_blank_line_of_either_kind() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nA: b\r\n\r\n"), Some(24));
        assert_eq!(head_end(b"GET / HTTP/1.1\n\n"), Some(16));
        assert_eq!(head_end(b"GET / HTTP/1.1\nA: b\n\r\n"), Some(22));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nA: b\r\n"), None);
        assert_eq!(head_end(b""), None);
    }
}
