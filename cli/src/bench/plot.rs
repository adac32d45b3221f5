//! A hand-written SVG rate-distortion plot: PSNR (dB) against bits/value, one curve per
//! series.

use std::fmt::Write as _;

/// One curve: its legend, whether it is drawn dashed, and its (bits/value, PSNR dB) points
/// in any order.
pub struct Series {
    pub label: String,
    pub dashed: bool,
    pub points: Vec<(f64, f64)>,
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The SVG document of `series`, in their order (points sorted by bits/value here).
pub fn svg(mut series: Vec<Series>) -> String {
    for c in &mut series {
        c.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let all = series.iter().flat_map(|c| c.points.iter().copied());
    let (mut x1, mut y0, mut y1) = (1.0f64, f64::INFINITY, f64::NEG_INFINITY);
    for (x, y) in all {
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !y0.is_finite() {
        (y0, y1) = (0.0, 100.0);
    }
    let x1 = (x1 / 4.0).ceil() * 4.0;
    let y0 = (y0 / 20.0).floor() * 20.0;
    let y1 = ((y1 / 20.0).ceil() * 20.0).max(y0 + 20.0);
    let (w, h, l, r, t, b) = (900.0, 560.0, 70.0, 260.0, 40.0, 60.0);
    let px = |x: f64| l + (x / x1) * (w - l - r);
    let py = |y: f64| h - b - (y - y0) / (y1 - y0) * (h - t - b);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(o, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(
        o,
        "<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">fzpack rate-distortion: \
         PSNR vs bits/value</text>",
        (l + w - r) / 2.0
    );
    // grid and ticks
    let xs = if x1 <= 8.0 { 1.0 } else { 4.0 };
    let mut x = 0.0;
    while x <= x1 + 1e-9 {
        let _ = writeln!(
            o,
            "<line x1=\"{0:.1}\" y1=\"{1}\" x2=\"{0:.1}\" y2=\"{2}\" stroke=\"#ddd\"/>\
             <text x=\"{0:.1}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>",
            px(x),
            t,
            h - b,
            h - b + 18.0,
            x
        );
        x += xs;
    }
    let mut y = y0;
    while y <= y1 + 1e-9 {
        let _ = writeln!(
            o,
            "<line x1=\"{0}\" y1=\"{1:.1}\" x2=\"{2}\" y2=\"{1:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{3}\" y=\"{4:.1}\" text-anchor=\"end\">{5}</text>",
            l,
            py(y),
            w - r,
            l - 6.0,
            py(y) + 4.0,
            y
        );
        y += 20.0;
    }
    let _ = writeln!(
        o,
        "<rect x=\"{l}\" y=\"{t}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>",
        w - l - r,
        h - t - b
    );
    let _ = writeln!(
        o,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">bits per value</text>",
        (l + w - r) / 2.0,
        h - 16.0
    );
    let _ = writeln!(
        o,
        "<text x=\"18\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {0})\">\
         PSNR (dB)</text>",
        (t + h - b) / 2.0
    );
    for (i, curve) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let dash = if curve.dashed {
            " stroke-dasharray=\"6 3\""
        } else {
            ""
        };
        let p: Vec<String> = curve
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            o,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"2\"{dash}/>",
            p.join(" ")
        );
        for &(x, y) in &curve.points {
            let _ = writeln!(
                o,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{c}\"/>",
                px(x),
                py(y)
            );
        }
        let ly = t + 10.0 + 18.0 * i as f64;
        let _ = writeln!(
            o,
            "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{c}\" stroke-width=\"2\"{dash}/>\
             <text x=\"{3}\" y=\"{4}\">{5}</text>",
            w - r + 10.0,
            ly,
            w - r + 34.0,
            w - r + 40.0,
            ly + 4.0,
            esc(&curve.label)
        );
    }
    o.push_str("</svg>\n");
    o
}
