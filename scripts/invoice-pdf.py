#!/usr/bin/env python3
"""Writes examples/data/invoice.pdf: a one-page invoice with a real text layer (Helvetica, WinAnsi),
its table cells placed at their own positions as invoicing software writes them. Standard library
only; the text is known, so the example's answers can be checked against it. Run from the repository
root: python3 scripts/invoice-pdf.py"""

ROWS = [
    # (x, y, size, text)
    (72, 760, 20, "INVOICE"),
    (72, 730, 10, "Atelier Moreau SARL"),
    (72, 716, 10, "12 rue des Lilas, 69003 Lyon, France"),
    (360, 730, 10, "Invoice number: INV-2026-0457"),
    (360, 716, 10, "Invoice date: 14 November 2026"),
    (360, 702, 10, "Due date: 14 December 2026"),
    (72, 670, 10, "Bill to:"),
    (72, 656, 10, "Northwind Traders Ltd"),
    (72, 642, 10, "4 Harbour Street, Edinburgh EH6 6QR"),
    (72, 600, 10, "Description"),
    (330, 600, 10, "Qty"),
    (380, 600, 10, "Unit price"),
    (470, 600, 10, "Amount"),
    (72, 582, 10, "Website redesign"),
    (330, 582, 10, "1"),
    (380, 582, 10, "2400.00"),
    (470, 582, 10, "2400.00"),
    (72, 566, 10, "Hosting, 12 months"),
    (330, 566, 10, "12"),
    (380, 566, 10, "15.00"),
    (470, 566, 10, "180.00"),
    (72, 550, 10, "Accessibility audit"),
    (330, 550, 10, "1"),
    (380, 550, 10, "650.00"),
    (470, 550, 10, "650.00"),
    (380, 520, 10, "Subtotal: 3230.00 EUR"),
    (380, 506, 10, "VAT 20%: 646.00 EUR"),
    (380, 486, 12, "Total due: 3876.00 EUR"),
    (72, 440, 9, "Payment by bank transfer to IBAN FR76 3000 6000 0112 3456 7890 189 within 30 days."),
]


def escape(text):
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def main():
    content = "".join(
        f"BT /F1 {size} Tf {x} {y} Td ({escape(text)}) Tj ET\n" for x, y, size, text in ROWS
    )
    # Rules under the table's head and above the totals.
    content += "0.5 w 72 594 m 523 594 l S 72 540 m 523 540 l S\n"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
        "/Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>",
        f"<< /Length {len(content)} >>\nstream\n{content}endstream",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    with open("examples/data/invoice.pdf", "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
