//! Minimal valid PDFs written by hand for tests: known text on known pages (Helvetica, one line under
//! the other), optionally an image on each page, which with no text makes a scan. Included by path
//! (`#[path = ...] mod pdf_writer;`) by the tests that read PDFs.

/// A minimal valid PDF: one page per entry, each line of it drawn with Helvetica, one below the other;
/// with `image`, each page also draws an image and, when its lines are empty, nothing else (a scan).
pub fn write_pdf(pages: &[&[&str]], image: bool) -> Vec<u8> {
    let mut objects: Vec<String> = Vec::new();
    // 1: catalog, 2: pages, 3: font, 4: image; then per page: page, contents.
    let first_page = 5;
    let kids: Vec<String> = (0..pages.len())
        .map(|i| format!("{} 0 R", first_page + 2 * i))
        .collect();
    objects.push("<< /Type /Catalog /Pages 2 0 R >>".to_owned());
    objects.push(format!(
        "<< /Type /Pages /Kids [{}] /Count {} >>",
        kids.join(" "),
        pages.len()
    ));
    objects.push(
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_owned(),
    );
    let pixels = "\u{0}\u{ff}".repeat(8);
    objects.push(format!(
        "<< /Type /XObject /Subtype /Image /Width 4 /Height 4 /ColorSpace /DeviceGray \
         /BitsPerComponent 8 /Length {} >>\nstream\n{pixels}\nendstream",
        pixels.chars().count()
    ));
    for (i, lines) in pages.iter().enumerate() {
        let mut content = String::new();
        if image {
            content.push_str("q 200 0 0 200 100 400 cm /Im1 Do Q\n");
        }
        if !lines.is_empty() {
            content.push_str("BT /F1 12 Tf 14 TL 72 720 Td\n");
            for line in *lines {
                let escaped = line
                    .replace('\\', "\\\\")
                    .replace('(', "\\(")
                    .replace(')', "\\)");
                content.push_str(&format!("({escaped}) Tj T*\n"));
            }
            content.push_str("ET\n");
        }
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {} 0 R \
             /Resources << /Font << /F1 3 0 R >> /XObject << /Im1 4 0 R >> >> >>",
            first_page + 2 * i + 1
        ));
        objects.push(format!(
            "<< /Length {} >>\nstream\n{content}endstream",
            content.len()
        ));
    }
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        // The image's bytes are written as Latin-1, one byte per char.
        out.extend(format!("{} 0 obj\n", i + 1).bytes());
        out.extend(object.chars().map(|c| c as u32 as u8));
        out.extend(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).bytes());
    for offset in offsets {
        out.extend(format!("{offset:010} 00000 n \n").bytes());
    }
    out.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .bytes(),
    );
    out
}
