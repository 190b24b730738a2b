//! Writing a stack folder, whichever way `bakeoff new` makes it: its `LANGUAGE/NAME` checked, files
//! written, and trees copied with build outputs and tool folders left behind.

use crate::error::LabError;
use crate::stacks::setup_outputs::OUTPUT_FOLDERS;
use std::path::Path;

/// Checks `LANGUAGE/NAME` and returns its two parts.
pub fn split_name(name: &str) -> Result<(&str, &str), LabError> {
    let bad = |problem: String| LabError::Input {
        what: format!("`{name}`"),
        problem,
        hint: "name it LANGUAGE/NAME in lower case, e.g. go/my-api (letters, digits, `-`, `_`)".into(),
    };
    let (language, short) = name.split_once('/').ok_or_else(|| bad("it has no `/` between language and name".into()))?;
    for part in [language, short] {
        if part.is_empty() || !part.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_') {
            return Err(bad(format!("`{part}` is not a usable folder name")));
        }
    }
    Ok((language, short))
}

/// Copies `from` into `to` (created), passing each text file through `edit`; build outputs and
/// version-control folders are left behind.
pub(crate) fn copy_tree(from: &Path, to: &Path, edit: &dyn Fn(&str) -> String) -> Result<(), LabError> {
    let entries = std::fs::read_dir(from).map_err(|e| LabError::Input {
        what: from.display().to_string(),
        problem: format!("cannot read it: {e}"),
        hint: "run from the bakeoff project folder, or pass --root".into(),
    })?;
    std::fs::create_dir_all(to).map_err(|e| write_error(to, e))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let skipped = name.to_str().is_some_and(|n| TOOL_FOLDERS.contains(&n) || OUTPUT_FOLDERS.contains(&n));
        if skipped || path.is_symlink() {
            continue;
        }
        if path.is_dir() {
            copy_tree(&path, &to.join(&name), edit)?;
        } else {
            let bytes = std::fs::read(&path).map_err(|e| write_error(&path, e))?;
            let out = match String::from_utf8(bytes) {
                Ok(text) => edit(&text).into_bytes(),
                Err(e) => e.into_bytes(),
            };
            std::fs::write(to.join(&name), out).map_err(|e| write_error(&to.join(&name), e))?;
        }
    }
    Ok(())
}

/// Tool folders no stack folder should carry over (nor build outputs, `OUTPUT_FOLDERS`).
const TOOL_FOLDERS: [&str; 3] = [".git", ".bakeoff-cache", "results"];

pub(crate) fn write(path: &Path, text: &str) -> Result<(), LabError> {
    std::fs::write(path, text).map_err(|e| write_error(path, e))
}

fn write_error(path: &Path, e: std::io::Error) -> LabError {
    LabError::Input { what: path.display().to_string(), problem: e.to_string(), hint: "check that the stacks folder is writable".into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_language_slash_name_in_lower_case() {
        assert_eq!(split_name("go/my-api").unwrap(), ("go", "my-api"));
        for bad in ["go", "go/", "Go/x", "go/a b", "go/a/b"] {
            assert!(split_name(bad).unwrap_err().to_string().contains("hint"), "{bad}");
        }
    }
}
