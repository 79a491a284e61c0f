//! Item 2: a managed hook starts with a fixed environment, so nothing the user controls —
//! `PATH`, the Python user site directory under `HOME`, `PYTHON*`/`LD_*`/… variables —
//! changes which program runs as the administrator's hook.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{assert_blocked, executable, gate_config, managed, root, run_bash, NO};
use crate::common::hooks::fixture;
use crate::common::{path_str, TestAgent};

/// The `PATH` a managed hook gets unless its entry sets one.
const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// A managed `guard` gate on bash that reports its environment to `report`; `command` runs
/// the strict hook (by path, through its `#!/usr/bin/env python3` line, or through a bare
/// `python3`).
fn managed_gate(command: String, name: &str, report: &Path) -> Value {
    let mut config = gate_config(json!(["bash"]));
    config["report"] = json!(path_str(report));
    json!({"command": command, "name": name, "config": config,
           "timeout_ms": 3000, "start_timeout_ms": 5000})
}

/// What the strict hook reported about itself.
fn report(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("the hook wrote no report to {}: {e}", path.display()));
    serde_json::from_str(&text).expect("report is JSON")
}

fn env_of<'a>(report: &'a Value, name: &str) -> Option<&'a str> {
    report["env"][name].as_str()
}

/// A directory of fake programs that log their use to `marker` and fail, put first on the
/// user's `PATH`.
fn fake_bin(agent: &mut TestAgent, marker: &Path, names: &[&str]) -> PathBuf {
    let dir = root(agent).join("fake-bin");
    for name in names {
        executable(
            &dir.join(name),
            &format!(
                "#!/bin/sh\necho \"$0 $*\" >> '{}'\nexit 1\n",
                marker.display()
            ),
        );
    }
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    agent.env("PATH", &format!("{}:{path}", dir.display()));
    dir
}

#[tokio::test]
async fn a_python3_first_on_the_users_path_does_not_run_a_managed_hook() {
    let mut agent = TestAgent::new();
    let marker = root(&agent).join("fake-python-ran");
    let fake = fake_bin(&mut agent, &marker, &["python3"]);
    let (by_path, by_name) = (root(&agent).join("r1.json"), root(&agent).join("r2.json"));
    managed(
        &mut agent,
        json!({"hooks": [
            // `#!/usr/bin/env python3` looks `python3` up on the hook's PATH.
            managed_gate(fixture("strict_host.py"), "guard", &by_path),
            // A bare command name resolves on the system PATH, not the user's.
            managed_gate(format!("python3 {}", fixture("strict_host.py")), "guard2", &by_name),
        ]}),
    );
    let (out, _) = run_bash(&agent).await;
    assert!(
        !marker.exists(),
        "the user's python3 ran: {:?}\n{out}",
        std::fs::read_to_string(&marker)
    );
    assert_blocked(&agent, &out, NO);
    for r in [report(&by_path), report(&by_name)] {
        let exe = r["executable"].as_str().unwrap_or_default();
        assert!(!exe.starts_with(&path_str(&fake)), "{exe}");
        assert_eq!(env_of(&r, "PATH"), Some(SYSTEM_PATH), "{r}");
    }
}

/// `major.minor` of the `python` program, as the user site directory names it.
fn python_version(python: &str) -> Option<String> {
    let out = std::process::Command::new(python)
        .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[tokio::test]
async fn a_usercustomize_in_the_users_site_directory_does_not_reach_a_managed_hook() {
    let mut agent = TestAgent::new();
    let marker = root(&agent).join("usercustomize-ran");
    // Planted for every python3 the hook could run: the user's and the system's.
    let versions: std::collections::BTreeSet<String> = ["python3", "/usr/bin/python3"]
        .iter()
        .filter_map(|p| python_version(p))
        .collect();
    assert!(!versions.is_empty(), "no python3 to test with");
    for v in &versions {
        let site = agent
            .home
            .join(format!(".local/lib/python{v}/site-packages"));
        std::fs::create_dir_all(&site).expect("site dir");
        std::fs::write(
            site.join("usercustomize.py"),
            format!("open({:?}, 'a').write('hijacked\\n')\n", path_str(&marker)),
        )
        .expect("usercustomize");
    }
    let r = root(&agent).join("report.json");
    managed(
        &mut agent,
        json!({"hooks": [managed_gate(fixture("strict_host.py"), "guard", &r)]}),
    );
    let (out, _) = run_bash(&agent).await;
    assert!(!marker.exists(), "usercustomize.py ran\n{out}");
    assert_blocked(&agent, &out, NO);
    let r = report(&r);
    assert_eq!(env_of(&r, "PYTHONNOUSERSITE"), Some("1"), "{r}");
    let home = env_of(&r, "HOME").expect("a managed hook has a HOME");
    assert_ne!(
        home,
        path_str(&agent.home),
        "the user's HOME reached the hook"
    );
    assert_eq!(
        r["home"],
        json!({"mode": 0o700, "entries": []}),
        "HOME is a fresh private directory"
    );
    assert!(
        !Path::new(home).exists(),
        "the managed hook's HOME {home} outlived pi"
    );
}

#[tokio::test]
async fn language_runtime_variables_never_reach_a_managed_hook() {
    let mut agent = TestAgent::new();
    let marker = root(&agent).join("sitecustomize-ran");
    let pylib = root(&agent).join("pylib");
    std::fs::create_dir_all(&pylib).expect("pylib");
    std::fs::write(
        pylib.join("sitecustomize.py"),
        format!("open({:?}, 'a').write('hijacked\\n')\n", path_str(&marker)),
    )
    .expect("sitecustomize");
    let planted = [
        ("PYTHONPATH", path_str(&pylib)),
        ("PYTHONSTARTUP", path_str(&pylib.join("sitecustomize.py"))),
        ("LD_PRELOAD", path_str(&root(&agent).join("missing.so"))),
        ("NODE_OPTIONS", "--require /nonexistent.js".into()),
        ("PERL5LIB", path_str(&pylib)),
        ("RUBYOPT", "-w".into()),
        (
            "DYLD_INSERT_LIBRARIES",
            path_str(&root(&agent).join("x.dylib")),
        ),
    ];
    for (k, v) in &planted {
        agent.env(k, v);
    }
    agent.env("ACME_TOKEN", "tok-1");
    agent.env("SHELL", "/bin/sh");
    let r = root(&agent).join("report.json");
    let mut entry = managed_gate(fixture("strict_host.py"), "guard", &r);
    let mut names: Vec<&str> = planted.iter().map(|(k, _)| *k).collect();
    names.push("ACME_TOKEN");
    entry["env_passthrough"] = json!(names);
    entry["env"] = json!({"PYTHONIOENCODING": "utf-8"});
    managed(&mut agent, json!({"hooks": [entry]}));
    let (out, _) = run_bash(&agent).await;
    assert!(
        !marker.exists(),
        "sitecustomize.py on PYTHONPATH ran\n{out}"
    );
    assert_blocked(&agent, &out, NO);
    let r = report(&r);
    for (k, _) in &planted {
        assert_eq!(env_of(&r, k), None, "{k} reached the managed hook: {r}");
        assert!(
            out.stderr
                .contains(&format!("`env_passthrough` name {k} is ignored")),
            "pi does not say that {k} is ignored\n{out}"
        );
    }
    // What the administrator names, or sets, does reach it; LANG passes, SHELL does not.
    assert_eq!(env_of(&r, "ACME_TOKEN"), Some("tok-1"), "{r}");
    assert_eq!(env_of(&r, "PYTHONIOENCODING"), Some("utf-8"), "{r}");
    assert_eq!(env_of(&r, "LANG"), Some("C.UTF-8"), "{r}");
    assert_eq!(env_of(&r, "SHELL"), None, "{r}");
}

#[tokio::test]
async fn a_managed_entry_may_set_path_and_home() {
    let mut agent = TestAgent::new();
    let marker = root(&agent).join("fake-python-ran");
    fake_bin(&mut agent, &marker, &["python3"]);
    let admin_home = root(&agent).join("admin-home");
    std::fs::create_dir_all(&admin_home).expect("admin home");
    let r = root(&agent).join("report.json");
    let mut entry = managed_gate(
        format!("python3 {}", fixture("strict_host.py")),
        "guard",
        &r,
    );
    entry["env"] = json!({"PATH": "/usr/bin:/bin", "HOME": path_str(&admin_home)});
    managed(&mut agent, json!({"hooks": [entry]}));
    let (out, _) = run_bash(&agent).await;
    assert!(!marker.exists(), "the user's python3 ran\n{out}");
    assert_blocked(&agent, &out, NO);
    let r = report(&r);
    assert_eq!(env_of(&r, "PATH"), Some("/usr/bin:/bin"), "{r}");
    assert_eq!(
        env_of(&r, "HOME"),
        Some(path_str(&admin_home).as_str()),
        "{r}"
    );
    assert!(
        r["executable"]
            .as_str()
            .is_some_and(|e| e.starts_with("/usr/bin/")),
        "{r}"
    );
}
