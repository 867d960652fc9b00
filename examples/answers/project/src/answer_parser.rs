//! Reads a verifier's answer.

pub struct Answer {
    pub verdict: String,
    pub rows: Vec<Vec<String>>,
}

pub fn parse(text: &str) -> Answer {
    let mut verdict = String::new();
    let mut rows = Vec::new();
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("Verdict:") {
            verdict = v.trim().to_owned();
        } else if line.starts_with('|') {
            rows.push(line.split('|').map(|c| c.trim().to_owned()).collect());
        }
    }
    Answer { verdict, rows }
}

pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(tmp, path)
}
