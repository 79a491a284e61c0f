//! End-to-end discovery over `fixtures/skills/` (see its README): every rule at once, with the
//! exact skills and diagnostics a user would see. The tree is copied to a temp dir first so the
//! test can add the `.gitignore`, `node_modules` and symlinks git should not carry.

use std::fs;
use std::path::{Path, PathBuf};

use super::*;

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The fixture tree in a temp dir, canonicalised so expected paths match on macOS too.
fn fixture() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap().join("skills");
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/skills"),
        &root,
    );
    fs::write(
        root.join("project-pi/.gitignore"),
        "secret.md\n/ignored-skill/\n",
    )
    .unwrap();
    let nm = root.join("project-pi/node_modules/pkg");
    fs::create_dir_all(&nm).unwrap();
    fs::write(
        nm.join("SKILL.md"),
        "---\nname: from-deps\ndescription: never scanned\n---\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink("../project-pi/group/lint", root.join("user-pi/lint-link")).unwrap();
        symlink(".", root.join("user-agents/loop")).unwrap();
        symlink("missing", root.join("user-agents/broken")).unwrap();
    }
    (tmp, root)
}

fn sources(root: &Path) -> Vec<SkillSource> {
    use DiscoveryMode::*;
    // Deliberately out of precedence order: discovery sorts by origin, stably.
    vec![
        SkillSource::new(
            root.join("hook"),
            Pi,
            SkillOrigin::Hook("secret_scan".into()),
        ),
        SkillSource::new(root.join("cli/extra.md"), Pi, SkillOrigin::Cli),
        SkillSource::new(root.join("cli/not-md.txt"), Pi, SkillOrigin::Cli),
        SkillSource::new(root.join("cli/missing.md"), Pi, SkillOrigin::Cli),
        SkillSource::new(root.join("user-pi"), Pi, SkillOrigin::User),
        SkillSource::new(root.join("user-agents"), Agents, SkillOrigin::User),
        SkillSource::new(root.join("project-pi"), Pi, SkillOrigin::Project),
        SkillSource::new(root.join("project-agents"), Agents, SkillOrigin::Project),
        // Auto-discovered locations may be absent without a warning.
        SkillSource::new(root.join("no-such-dir"), Agents, SkillOrigin::Project),
    ]
}

#[cfg(unix)]
#[test]
fn fixture_tree_yields_exactly_the_expected_skills_and_diagnostics() {
    let (_tmp, root) = fixture();
    let set = discover(&sources(&root));
    let rel = |p: &Path| p.strip_prefix(&root).unwrap().display().to_string();

    let skills: Vec<(String, String, SkillOrigin, bool)> = set
        .skills
        .iter()
        .map(|s| {
            assert_eq!(s.base_dir, s.file_path.parent().unwrap());
            (
                s.name.clone(),
                rel(&s.file_path),
                s.origin.clone(),
                s.disable_model_invocation,
            )
        })
        .collect();
    use SkillOrigin::*;
    let e = |n: &str, p: &str, o: SkillOrigin, h: bool| (n.to_string(), p.to_string(), o, h);
    assert_eq!(
        skills,
        vec![
            e("Bad_Name", "project-pi/Bad_Name/SKILL.md", Project, false),
            e("deploy", "project-pi/deploy/SKILL.md", Project, true),
            e("kept", "project-pi/fd/kept/SKILL.md", Project, false),
            e("lint", "project-pi/group/lint/SKILL.md", Project, false),
            e("-odd--name-", "project-pi/hyphens/SKILL.md", Project, false),
            e("quick-review", "project-pi/review.md", Project, false),
            e("shared", "project-pi/shared/SKILL.md", Project, false),
            e(
                "inner",
                "project-pi/sub-ignore/inner/SKILL.md",
                Project,
                false
            ),
            e("too-long", "project-pi/too-long/SKILL.md", Project, false),
            e(
                "unknown-fields",
                "project-pi/unknown-fields/SKILL.md",
                Project,
                false
            ),
            e("tool", "project-agents/tool/SKILL.md", Project, false),
            e(
                "vendor-review",
                "project-agents/vendor/review.md",
                Project,
                false
            ),
            e("unique", "user-pi/unique/SKILL.md", User, false),
            e(
                "hooked",
                "hook/extra-hook/SKILL.md",
                Hook("secret_scan".into()),
                false
            ),
        ]
    );

    let diagnostics: Vec<(DiagnosticLevel, String, String)> = set
        .diagnostics
        .iter()
        .map(|d| {
            // The YAML parser's own wording is not ours to pin down.
            let message = if d.message.starts_with("invalid frontmatter YAML: ") {
                "invalid frontmatter YAML: …".to_string()
            } else {
                d.message.clone()
            };
            (d.level, rel(&d.path), message)
        })
        .collect();
    use DiagnosticLevel::*;
    let d = |l: DiagnosticLevel, p: &str, m: &str| (l, p.to_string(), m.to_string());
    let invalid = "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)";
    assert_eq!(
        diagnostics,
        vec![
            d(Warning, "project-pi/Bad_Name/SKILL.md", invalid),
            d(
                Warning,
                "project-pi/bad-yaml/SKILL.md",
                "invalid frontmatter YAML: …"
            ),
            d(
                Warning,
                "project-pi/hyphens/SKILL.md",
                "name must not start or end with a hyphen"
            ),
            d(
                Warning,
                "project-pi/hyphens/SKILL.md",
                "name must not contain consecutive hyphens"
            ),
            d(
                Warning,
                "project-pi/no-desc/SKILL.md",
                "description is required"
            ),
            d(
                Warning,
                "project-pi/too-long/SKILL.md",
                "description exceeds 1024 characters (1025)"
            ),
            d(
                Warning,
                "project-pi/too-long/SKILL.md",
                "compatibility exceeds 500 characters (501)"
            ),
            d(
                Warning,
                "cli/not-md.txt",
                "skill path is not a markdown file"
            ),
            d(Warning, "cli/missing.md", "skill path does not exist"),
            d(
                Collision,
                "user-pi/shared/SKILL.md",
                "name \"shared\" collision"
            ),
            d(
                Collision,
                "user-agents/other/SKILL.md",
                "name \"tool\" collision"
            ),
            d(Collision, "cli/extra.md", "name \"unique\" collision"),
            d(
                Collision,
                "hook/contrib/SKILL.md",
                "name \"quick-review\" collision"
            ),
        ]
    );
    let shared = set.diagnostics[9].collision.as_ref().unwrap();
    assert_eq!(rel(&shared.winner_path), "project-pi/shared/SKILL.md");
    assert_eq!(rel(&shared.loser_path), "user-pi/shared/SKILL.md");
}

#[cfg(unix)]
#[test]
fn fixture_prompt_hides_disabled_skills_but_expansion_still_works() {
    let (_tmp, root) = fixture();
    let set = discover(&sources(&root));
    let block = prompt_block(&set).unwrap();
    assert_eq!(block.matches("<skill>").count(), set.skills.len() - 1);
    assert!(!block.contains("<name>deploy</name>"));
    let lint = root.join("project-pi/group/lint/SKILL.md");
    assert!(block.contains(&format!("<location>{}</location>", lint.display())));

    let SkillExpansion::Expanded(text) = expand_skill_command("/skill:deploy prod", &set) else {
        panic!("deploy should expand");
    };
    let dir = root.join("project-pi/deploy");
    assert_eq!(
        text,
        format!(
            "<skill name=\"deploy\" location=\"{}\">\nReferences are relative to {}.\n\n\
             # Deploy\n\nRun scripts/deploy.sh.\n</skill>\n\nprod",
            dir.join("SKILL.md").display(),
            dir.display()
        )
    );
}

/// Rough timing of discovery over a generated 100,000-file tree. Run with
/// `cargo test --release --lib skills::fixture_tests::discovery_speed -- --ignored --nocapture`.
#[test]
#[ignore]
fn discovery_speed_on_100k_files() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    // 1,000 directories of 100 files; every 10th directory is a skill package with its own
    // references, the rest hold source files and notes the walk must pass over.
    for d in 0..1000 {
        let dir = root
            .join(format!("area-{}", d / 50))
            .join(format!("d{d:04}"));
        fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            let name = if d % 10 == 0 && f == 0 {
                "SKILL.md".to_string()
            } else if f % 25 == 0 {
                format!("note-{f}.md")
            } else {
                format!("file-{f}.rs")
            };
            let body = if name == "SKILL.md" {
                format!("---\nname: skill-{d}\ndescription: generated skill {d}\n---\nbody\n")
            } else {
                "x\n".to_string()
            };
            fs::write(dir.join(name), body).unwrap();
        }
    }
    fs::write(root.join(".gitignore"), "*.log\narea-19/\n").unwrap();
    let sources = [
        SkillSource::new(&root, DiscoveryMode::Pi, SkillOrigin::User),
        SkillSource::new(&root, DiscoveryMode::Agents, SkillOrigin::Project),
    ];
    for source in &sources {
        let start = std::time::Instant::now();
        let set = discover(std::slice::from_ref(source));
        term_eprintln!(
            "{:?}: {} skills, {} diagnostics in {:?}",
            source.mode,
            set.skills.len(),
            set.diagnostics.len(),
            start.elapsed()
        );
    }
}
