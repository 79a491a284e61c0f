//! Small file-tool helpers shared by `read`, `write`, `edit` and `ls`: Node-style error texts
//! (the model was trained on pi's `ENOENT: no such file or directory, …` wording), image
//! sniffing by magic bytes, and base64.

use std::io;

use serde_json::Value;

/// The Node `code` for an I/O error (`ENOENT`, `EACCES`, …), if it is one Node would name.
pub fn errno_code(e: &io::Error) -> Option<&'static str> {
    let from_kind = match e.kind() {
        io::ErrorKind::NotFound => Some("ENOENT"),
        io::ErrorKind::PermissionDenied => Some("EACCES"),
        _ => None,
    };
    from_kind.or(match e.raw_os_error() {
        Some(1) => Some("EPERM"),
        Some(2) => Some("ENOENT"),
        Some(13) => Some("EACCES"),
        Some(20) => Some("ENOTDIR"),
        Some(21) => Some("EISDIR"),
        Some(30) => Some("EROFS"),
        Some(36) => Some("ENAMETOOLONG"),
        Some(40) => Some("ELOOP"),
        _ => None,
    })
}

/// `ENOENT: no such file or directory, access '/abs/path'`, as Node words a failed fs call.
pub fn node_error(e: &io::Error, syscall: &str, path: &std::path::Path) -> String {
    let Some(code) = errno_code(e) else {
        return e.to_string();
    };
    let what = match code {
        "ENOENT" => "no such file or directory",
        "EACCES" => "permission denied",
        "EPERM" => "operation not permitted",
        "ENOTDIR" => "not a directory",
        "EISDIR" => "illegal operation on a directory",
        "EROFS" => "read-only file system",
        "ENAMETOOLONG" => "name too long",
        "ELOOP" => "too many symbolic links encountered",
        _ => return e.to_string(),
    };
    format!("{code}: {what}, {syscall} '{}'", path.display())
}

/// The MIME type of a supported image (png, jpeg, gif, webp, bmp), judged by its first bytes
/// so that a misnamed file is still recognised and a `.png` full of text is not.
pub fn sniff_image(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(&[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A]) {
        Some("image/png")
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && &head[0..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else if head.starts_with(b"BM") && head.len() >= 14 {
        Some("image/bmp")
    } else {
        None
    }
}

/// Standard base64 with padding (image blocks carry their bytes this way).
pub fn base64_encode(data: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// A JSON number argument as pi's TypeBox `Type.Number` accepts it (integers or floats).
pub fn number_arg(args: &Value, key: &str) -> Option<f64> {
    args.get(key).and_then(Value::as_f64)
}

/// Print a number the way JavaScript's template literals do (`5`, not `5.0`).
pub fn js_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_known_vectors() {
        assert_eq!(base64_encode(b""), "");
        assert_eq!(base64_encode(b"f"), "Zg==");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        assert_eq!(base64_encode(b"foo"), "Zm9v");
        assert_eq!(base64_encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64_encode(&[0xFF, 0xFE, 0xFD]), "//79");
    }

    #[test]
    fn images_are_recognised_by_content_not_name() {
        assert_eq!(
            sniff_image(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
            Some("image/png")
        );
        assert_eq!(sniff_image(b"\xff\xd8\xff\xe0"), Some("image/jpeg"));
        assert_eq!(sniff_image(b"GIF89a...."), Some("image/gif"));
        assert_eq!(sniff_image(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff_image(b"hello world"), None);
    }

    #[test]
    fn missing_file_reads_like_node() {
        let e = io::Error::from(io::ErrorKind::NotFound);
        assert_eq!(
            node_error(&e, "access", std::path::Path::new("/x/y")),
            "ENOENT: no such file or directory, access '/x/y'"
        );
    }

    #[test]
    fn numbers_print_like_javascript() {
        assert_eq!(js_number(5.0), "5");
        assert_eq!(js_number(2.5), "2.5");
    }
}
