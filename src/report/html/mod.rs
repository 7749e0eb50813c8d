//! `profrj report SNAPSHOT --html DIR --sources PATH[:PATH…]`: the coverage
//! section as static HTML pages, as JaCoCo's report lays them out: an
//! index of packages, a page per package (its classes), per class (its
//! methods) and per source file found on the `--sources` path (each line
//! coloured covered, partly covered or missed, with its count and a
//! diamond for its branches). docs/READING.md describes them.
//!
//! Everything the pages show is computed first (`model.rs`); the pages'
//! names are checked free in DIR (`out_dir.rs`) before the first is
//! written; then each page is written as it is produced, a source file read
//! line by line while its page is written (`source.rs`).

mod model;
mod out_dir;
mod page;
mod pages;
mod source;

use crate::error::CliError;
use crate::snapshot::CoverageSection;
use model::{packages, ClassModel, PackageModel};
use out_dir::{OutDir, PageNames};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the pages go and where the sources are.
pub struct Options<'a> {
    pub dir: &'a Path,
    pub sources: &'a [PathBuf],
    /// Replace the pages of an earlier report in `dir`.
    pub replace: bool,
}

/// A source file of the section: its page when found.
pub struct SourceEntry {
    pub found: Option<PathBuf>,
    pub page: String,
    /// Its classes: (package, class) indices.
    pub classes: Vec<(usize, usize)>,
}

/// What is written where, decided before anything is.
pub struct Plan<'a> {
    pub packages: Vec<PackageModel<'a>>,
    pub package_pages: Vec<String>,
    /// Per package, per class.
    pub class_pages: Vec<Vec<String>>,
    /// By source path.
    pub files: BTreeMap<String, SourceEntry>,
    /// Whether any class has branches: the tables' branch columns.
    pub branches: bool,
    pub roots: &'a [PathBuf],
}

impl<'a> Plan<'a> {
    fn new(cov: &'a CoverageSection, roots: &'a [PathBuf]) -> Plan<'a> {
        let packages = packages(cov);
        let mut names = PageNames::default();
        let package_pages = packages
            .iter()
            .map(|p| {
                names.name(
                    "p",
                    if p.name.is_empty() {
                        "(default)"
                    } else {
                        p.name
                    },
                )
            })
            .collect();
        let class_pages = packages
            .iter()
            .map(|p| p.classes.iter().map(|c| names.name("c", c.name)).collect())
            .collect();
        let mut files: BTreeMap<String, SourceEntry> = BTreeMap::new();
        for (p, pk) in packages.iter().enumerate() {
            for (c, class) in pk.classes.iter().enumerate() {
                files
                    .entry(class.source.clone())
                    .or_insert_with(|| SourceEntry {
                        found: source::find(roots, &class.source).map(|(path, _)| path),
                        page: names.name("s", &class.source),
                        classes: Vec::new(),
                    })
                    .classes
                    .push((p, c));
            }
        }
        Plan {
            branches: packages.iter().any(|p| p.figures.branches.is_some()),
            packages,
            package_pages,
            class_pages,
            files,
            roots,
        }
    }

    /// Every class as (package, class) indices.
    pub fn class_refs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.packages
            .iter()
            .enumerate()
            .flat_map(|(p, pk)| (0..pk.classes.len()).map(move |c| (p, c)))
    }

    /// The page of the class's source, if it was found.
    pub fn source_page(&self, class: &ClassModel) -> Option<&str> {
        let f = self.files.get(&class.source)?;
        f.found.as_ref().map(|_| f.page.as_str())
    }

    pub fn roots_text(&self) -> String {
        if self.roots.is_empty() {
            return "nothing (no --sources given)".to_owned();
        }
        let roots: Vec<String> = self
            .roots
            .iter()
            .map(|r| page::html(&r.display().to_string()))
            .collect();
        roots.join(", ")
    }

    /// Every page's name.
    fn page_names(&self) -> impl Iterator<Item = &str> {
        std::iter::once("index.html")
            .chain(self.package_pages.iter().map(String::as_str))
            .chain(self.class_pages.iter().flatten().map(String::as_str))
            .chain(
                self.files
                    .values()
                    .filter(|f| f.found.is_some())
                    .map(|f| f.page.as_str()),
            )
    }
}

/// What was written: pages, source files found, classes without one.
pub struct Written {
    pub pages: usize,
    pub sources: usize,
    pub missing: usize,
}

pub fn write_pages(cov: &CoverageSection, opts: &Options) -> Result<Written, CliError> {
    let plan = Plan::new(cov, opts.sources);
    let out = OutDir::open(opts.dir, opts.replace)?;
    out.check_free(plan.page_names())?;
    let mut written = Written {
        pages: 0,
        sources: 0,
        missing: 0,
    };
    out.write("index.html", |w| pages::index(w, &plan))?;
    written.pages += 1;
    for p in 0..plan.packages.len() {
        out.write(&plan.package_pages[p], |w| pages::package(w, &plan, p))?;
        for c in 0..plan.packages[p].classes.len() {
            out.write(&plan.class_pages[p][c], |w| pages::class(w, &plan, p, c))?;
        }
        written.pages += 1 + plan.packages[p].classes.len();
    }
    for (path, entry) in &plan.files {
        let Some(found) = &entry.found else {
            written.missing += entry.classes.len();
            continue;
        };
        // Opened again, one file at a time: the plan keeps paths, not files.
        let file = source::open_regular(found)
            .map_err(|e| CliError::Input(format!("{}: {e}", found.display())))?;
        out.write(&entry.page, |w| pages::source(w, &plan, path, entry, file))?;
        written.pages += 1;
        written.sources += 1;
    }
    Ok(written)
}
