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

/// Method and path of a complete head, or the status that refuses it.
pub(super) fn route(head: &[u8]) -> Result<(bool, String), (u16, &'static str)> {
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
    let path = path.split('?').next().unwrap_or("");
    Ok((head_only, path.to_string()))
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

    #[test]
    fn routes_and_refusals() {
        assert_eq!(
            route(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n"),
            Ok((false, "/metrics".to_string()))
        );
        assert_eq!(route(b"HEAD / HTTP/1.0\r\n\r\n"), Ok((true, "/".to_string())));
        assert_eq!(
            route(b"GET /metrics HTTP/1.1\nHost: a\n\n"),
            Ok((false, "/metrics".to_string()))
        );
        assert!(matches!(route(b"POST /metrics HTTP/1.1\r\n\r\n"), Err((405, _))));
        assert!(matches!(route(b"\x00\x01garbage\r\n\r\n"), Err((400, _))));
        let many = format!("GET / HTTP/1.1\r\n{}\r\n", "A: b\r\n".repeat(HEADERS_MAX + 1));
        assert!(matches!(route(many.as_bytes()), Err((431, _))));
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
