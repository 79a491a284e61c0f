//! Print and JSON runs as a client of the session controller: the command line's prompts in
//! order, each run waited for until it has settled; a hook's `/command` prints its text (on
//! stdout in print mode, stderr in JSON mode, which keeps stdout for events). The first
//! signal stops submitting prompts; what runs is aborted by the controller.

use tokio_util::sync::CancellationToken;

use crate::controller::{Disposition, PromptRequest, SessionController};

/// How the prompts went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Every prompt was submitted (or a signal stopped them).
    Done,
    /// A prompt was refused or a hook command failed; the message was printed.
    Failed,
}

pub async fn run_prompts(
    controller: &SessionController,
    prompts: Vec<String>,
    print: bool,
    interrupted: &CancellationToken,
) -> Ending {
    for p in prompts {
        if interrupted.is_cancelled() {
            break;
        }
        let submitted = tokio::select! {
            r = controller.prompt(PromptRequest::text(p)) => r,
            _ = interrupted.cancelled() => break,
        };
        match submitted {
            Ok(outcome) => {
                // JSON mode has it as a `hook_command` event in the stream.
                if let (Some(text), true) = (outcome.command_text, print) {
                    term_println!("{text}");
                }
                // A hook's command may have started a run too (`message.send_user`), so
                // every prompt waits for the run it may have caused.
                if outcome.disposition != Disposition::Queued {
                    controller.wait_idle().await;
                }
            }
            Err(e) => {
                term_eprintln!("Error: {e}");
                return Ending::Failed;
            }
        }
    }
    Ending::Done
}
