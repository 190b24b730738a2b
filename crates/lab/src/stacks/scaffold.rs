//! `bakeoff new`: writes a stack folder under stacks/ that passes verification at once, from a
//! template of templates/ (filled in with the installed toolchain's version), from an existing stack
//! (`--like`: renamed, its deliberate-bug variants and seed reference dropped) or from an ad-hoc
//! command and the folder it ran in (`--from-cmd`).

use crate::error::LabError;
use crate::stacks::stack_folder::{copy_tree, split_name, write};
use std::path::PathBuf;

/// The languages with a template under templates/.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateLanguage {
    /// templates/go: net/http.
    Go,
    /// templates/rust: the standard library's TcpListener, WORKERS threads.
    Rust,
    /// templates/python: asyncio streams, WORKERS processes.
    Python,
    /// templates/node: node:cluster + node:http.
    Node,
    /// templates/java: com.sun.net.httpserver, WORKERS threads.
    Java,
}

impl TemplateLanguage {
    /// Every language with a template.
    pub const ALL: [TemplateLanguage; 5] =
        [TemplateLanguage::Go, TemplateLanguage::Rust, TemplateLanguage::Python, TemplateLanguage::Node, TemplateLanguage::Java];

    /// Its folder name under stacks/ and templates/.
    pub fn id(self) -> &'static str {
        match self {
            TemplateLanguage::Go => "go",
            TemplateLanguage::Rust => "rust",
            TemplateLanguage::Python => "python",
            TemplateLanguage::Node => "node",
            TemplateLanguage::Java => "java",
        }
    }

    fn parse(id: &str) -> Option<TemplateLanguage> {
        Self::ALL.into_iter().find(|l| l.id() == id)
    }

    /// The command printing the toolchain's version, and how `runtime` names it.
    fn probe(self) -> (&'static str, &'static [&'static str], &'static str) {
        match self {
            TemplateLanguage::Go => ("go", &["version"], "go"),
            TemplateLanguage::Rust => ("rustc", &["--version"], "rustc"),
            TemplateLanguage::Python => ("python3", &["--version"], "CPython"),
            TemplateLanguage::Node => ("node", &["--version"], "node"),
            TemplateLanguage::Java => ("java", &["-version"], "OpenJDK"),
        }
    }

    /// The installed toolchain's full version (`1.26.8`), read from its own output.
    fn version(self) -> Result<String, LabError> {
        let (program, args, _) = self.probe();
        let out = std::process::Command::new(program).args(args).output().map_err(|e| LabError::Input {
            what: format!("`{program}`"),
            problem: format!("cannot run it: {e}"),
            hint: format!("install the {} toolchain (see `bakeoff stacks` for what each language needs)", self.id()),
        })?;
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        text.split(|c: char| c.is_whitespace() || c == '"')
            .map(|w| w.trim_start_matches("go").trim_start_matches('v'))
            .find(|w| w.split('.').count() >= 2 && w.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())))
            .map(str::to_string)
            .ok_or_else(|| LabError::Input {
                what: format!("`{program} {}`", args.join(" ")),
                problem: format!("no version in its output: {}", text.trim()),
                hint: "check that the toolchain on PATH works".into(),
            })
    }

    /// `runtime` as manifests write it: the name and the major (and for Go, Rust and Python minor) version.
    fn runtime(self, version: &str) -> String {
        let parts: Vec<&str> = version.split('.').collect();
        let short = match self {
            TemplateLanguage::Node | TemplateLanguage::Java => parts[0].to_string(),
            _ => parts[..2.min(parts.len())].join("."),
        };
        format!("{} {short}", self.probe().2)
    }
}

/// Where a new stack's sources come from.
#[derive(Debug, Clone)]
pub enum Origin {
    /// templates/LANGUAGE.
    Template,
    /// An existing stack, by name (`go/nethttp`).
    Like(String),
    /// An ad-hoc command and the folder it ran in (its files are copied).
    FromCommand {
        /// The start command.
        command: String,
        /// The setup command, if any.
        setup: Option<String>,
        /// The folder whose files are copied.
        dir: PathBuf,
    },
}

/// What `bakeoff new` is asked.
#[derive(Debug, Clone)]
pub struct NewStack {
    /// The project folder (stacks/, templates/).
    pub root: PathBuf,
    /// `LANGUAGE/NAME`.
    pub name: String,
    /// Where its sources come from.
    pub origin: Origin,
    /// The framework it is for (written into the manifest and README); default `none`.
    pub framework: Option<String>,
}

/// Writes the new stack folder and returns it; nothing is written when a check fails first.
pub fn scaffold(req: &NewStack) -> Result<PathBuf, LabError> {
    let (language, short) = split_name(&req.name)?;
    let dest = req.root.join("stacks").join(language).join(short);
    if dest.exists() {
        return Err(LabError::Input {
            what: dest.display().to_string(),
            problem: "the folder already exists".into(),
            hint: format!("pick another name, or `bakeoff verify {}` to check the stack there", req.name),
        });
    }
    let framework = req.framework.clone().unwrap_or_else(|| "none".into());
    let origin = match &req.origin {
        Origin::Template => {
            let lang = TemplateLanguage::parse(language).ok_or_else(|| LabError::Input {
                what: format!("`{language}`"),
                problem: "there is no template for this language".into(),
                hint: format!(
                    "use one of {}, or copy a stack of yours with --like",
                    TemplateLanguage::ALL.map(TemplateLanguage::id).join(", ")
                ),
            })?;
            let version = lang.version()?;
            let vars = Vars { stack: &req.name, short, framework: &framework, runtime: lang.runtime(&version), go_version: version };
            copy_tree(&req.root.join("templates").join(language), &dest, &|text| vars.fill(text))?;
            format!("the {language} template")
        }
        Origin::Like(like) => {
            crate::stacks::scaffold_like::copy_like(&req.root, like, &req.name, &dest, req.framework.as_deref())?;
            format!("a copy of {like}")
        }
        Origin::FromCommand { command, setup, dir } => {
            crate::stacks::scaffold_like::from_command(&dest, &req.name, command, setup.as_deref(), dir, &framework)?;
            format!("the command `{command}`")
        }
    };
    let readme = std::fs::read_to_string(req.root.join("templates").join("stack-readme.md")).unwrap_or_default();
    let mut readme = readme.replace("{{stack}}", &req.name).replace("{{origin}}", &origin).replace("{{framework}}", &framework);
    // A copy keeps what its original's README says, below the choices to fill in.
    if let Ok(copied) = std::fs::read_to_string(dest.join("README.md")) {
        readme.push_str(&format!("\n## The README it was copied with\n\n{}", copied.replacen("# ", "### ", 1)));
    }
    write(&dest.join("README.md"), &readme)?;
    Ok(dest)
}

/// The values a template's `{{...}}` placeholders take.
struct Vars<'a> {
    stack: &'a str,
    short: &'a str,
    framework: &'a str,
    runtime: String,
    go_version: String,
}

impl Vars<'_> {
    fn fill(&self, text: &str) -> String {
        text.replace("{{stack}}", self.stack)
            .replace("{{crate}}", &self.short.replace('-', "_"))
            .replace("{{framework}}", self.framework)
            .replace("{{runtime}}", &self.runtime)
            .replace("{{go_version}}", &self.go_version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtimes_keep_the_version_parts_manifests_use() {
        assert_eq!(TemplateLanguage::Go.runtime("1.26.8"), "go 1.26");
        assert_eq!(TemplateLanguage::Node.runtime("20.20.2"), "node 20");
        assert_eq!(TemplateLanguage::Java.runtime("17.0.15"), "OpenJDK 17");
        assert_eq!(TemplateLanguage::Python.runtime("3.11.7"), "CPython 3.11");
    }

    #[test]
    fn an_existing_folder_is_refused_before_anything_is_written() {
        let root = std::env::temp_dir().join(format!("bakeoff-scaffold-{}", std::process::id()));
        std::fs::create_dir_all(root.join("stacks/go/taken")).unwrap();
        let req = NewStack { root: root.clone(), name: "go/taken".into(), origin: Origin::Template, framework: None };
        let e = scaffold(&req).unwrap_err().to_string();
        assert!(e.contains("already exists") && e.contains("hint"), "{e}");
        assert_eq!(std::fs::read_dir(root.join("stacks/go/taken")).unwrap().count(), 0, "nothing written into it");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
