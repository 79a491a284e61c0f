//! Which key does what in the editor. Terminals report the same intent in different ways
//! (Alt+Backspace as ESC DEL, Backspace as DEL or Ctrl+H, Shift+Enter only under the kitty
//! keyboard protocol, Ctrl+J as a bare line feed), so all of that is decided here, once, and
//! the editor acts on plain [`Action`]s. Keys the editor has no use for map to `None` and go
//! back to the app (Ctrl+C, Ctrl+D on an empty editor, Esc without a popup, Shift+Tab, …).

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Insert(char),
    /// Enter: submit (a `\` just before the cursor turns it into a newline instead).
    Submit,
    /// Alt+Enter: submit as a follow-up.
    FollowUp,
    /// Shift+Enter, Ctrl+J.
    Newline,
    Backspace,
    Delete,
    Left,
    Right,
    Up,
    Down,
    Home,
    End,
    WordLeft,
    WordRight,
    KillWordBack,
    KillWordForward,
    KillToLineStart,
    KillToLineEnd,
    Yank,
    Tab,
    /// Esc: closes the completion popup (the app's when there is none).
    Escape,
    /// Ctrl+D: delete forward; the app's (quit) when the editor is empty.
    DeleteOrEof,
    PageUp,
    PageDown,
}

/// The action for `key`, or `None` when it is not an editor key.
pub fn action_for(key: &KeyEvent) -> Option<Action> {
    // The kitty protocol also reports releases; only presses and repeats type.
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let m = key.modifiers;
    let ctrl = m.contains(KeyModifiers::CONTROL);
    let alt = m.contains(KeyModifiers::ALT);
    let shift = m.contains(KeyModifiers::SHIFT);
    use Action as A;
    let action = match key.code {
        KeyCode::Enter if shift || ctrl => A::Newline,
        KeyCode::Enter if alt => A::FollowUp,
        KeyCode::Enter => A::Submit,
        KeyCode::Backspace if alt || ctrl => A::KillWordBack,
        KeyCode::Backspace => A::Backspace,
        KeyCode::Delete if alt || ctrl => A::KillWordForward,
        KeyCode::Delete => A::Delete,
        KeyCode::Left if alt || ctrl => A::WordLeft,
        KeyCode::Right if alt || ctrl => A::WordRight,
        KeyCode::Left => A::Left,
        KeyCode::Right => A::Right,
        KeyCode::Up if !(alt || ctrl) => A::Up,
        KeyCode::Down if !(alt || ctrl) => A::Down,
        KeyCode::Home => A::Home,
        KeyCode::End => A::End,
        KeyCode::PageUp => A::PageUp,
        KeyCode::PageDown => A::PageDown,
        KeyCode::Tab if m.is_empty() => A::Tab,
        KeyCode::Esc if m.is_empty() => A::Escape,
        KeyCode::Char(c) if ctrl && !alt => return ctrl_action(c),
        KeyCode::Char(c) if alt && !ctrl => return alt_action(c),
        // AltGr arrives as Ctrl+Alt on some platforms and types a character.
        KeyCode::Char(c) if !c.is_control() => A::Insert(c),
        _ => return None,
    };
    Some(action)
}

fn ctrl_action(c: char) -> Option<Action> {
    use Action as A;
    Some(match c.to_ascii_lowercase() {
        'a' => A::Home,
        'e' => A::End,
        'b' => A::Left,
        'f' => A::Right,
        'w' => A::KillWordBack,
        // 0x08: Backspace on some terminals, Ctrl+Backspace on others; readline's choice.
        'h' => A::Backspace,
        'u' => A::KillToLineStart,
        'k' => A::KillToLineEnd,
        'y' => A::Yank,
        'j' => A::Newline,
        'd' => A::DeleteOrEof,
        _ => return None,
    })
}

fn alt_action(c: char) -> Option<Action> {
    use Action as A;
    Some(match c {
        'b' => A::WordLeft,
        'f' => A::WordRight,
        'd' => A::KillWordForward,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyEventState;

    fn key(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    fn act(code: KeyCode, m: KeyModifiers) -> Option<Action> {
        action_for(&key(code, m))
    }

    const NONE: KeyModifiers = KeyModifiers::NONE;
    const CTRL: KeyModifiers = KeyModifiers::CONTROL;
    const ALT: KeyModifiers = KeyModifiers::ALT;
    const SHIFT: KeyModifiers = KeyModifiers::SHIFT;

    #[test]
    fn enter_variants() {
        assert_eq!(act(KeyCode::Enter, NONE), Some(Action::Submit));
        assert_eq!(act(KeyCode::Enter, SHIFT), Some(Action::Newline));
        assert_eq!(act(KeyCode::Enter, ALT), Some(Action::FollowUp));
        // A raw-mode terminal reports Ctrl+J (line feed) as Ctrl+'j'.
        assert_eq!(act(KeyCode::Char('j'), CTRL), Some(Action::Newline));
    }

    #[test]
    fn readline_bindings() {
        assert_eq!(act(KeyCode::Char('a'), CTRL), Some(Action::Home));
        assert_eq!(act(KeyCode::Char('e'), CTRL), Some(Action::End));
        assert_eq!(act(KeyCode::Char('w'), CTRL), Some(Action::KillWordBack));
        assert_eq!(act(KeyCode::Backspace, ALT), Some(Action::KillWordBack));
        assert_eq!(act(KeyCode::Char('h'), CTRL), Some(Action::Backspace));
        assert_eq!(act(KeyCode::Char('u'), CTRL), Some(Action::KillToLineStart));
        assert_eq!(act(KeyCode::Char('k'), CTRL), Some(Action::KillToLineEnd));
        assert_eq!(act(KeyCode::Char('y'), CTRL), Some(Action::Yank));
        assert_eq!(act(KeyCode::Char('d'), ALT), Some(Action::KillWordForward));
    }

    #[test]
    fn word_motion_by_alt_or_ctrl_arrows_and_alt_b_f() {
        for m in [ALT, CTRL] {
            assert_eq!(act(KeyCode::Left, m), Some(Action::WordLeft));
            assert_eq!(act(KeyCode::Right, m), Some(Action::WordRight));
        }
        assert_eq!(act(KeyCode::Char('b'), ALT), Some(Action::WordLeft));
        assert_eq!(act(KeyCode::Char('f'), ALT), Some(Action::WordRight));
    }

    #[test]
    fn typed_characters_including_shifted_ones_insert() {
        assert_eq!(act(KeyCode::Char('x'), NONE), Some(Action::Insert('x')));
        assert_eq!(act(KeyCode::Char('X'), SHIFT), Some(Action::Insert('X')));
        assert_eq!(act(KeyCode::Char('日'), NONE), Some(Action::Insert('日')));
        assert_eq!(
            act(KeyCode::Char('@'), CTRL | ALT),
            Some(Action::Insert('@')),
            "AltGr"
        );
    }

    #[test]
    fn app_keys_are_not_the_editors() {
        assert_eq!(act(KeyCode::Char('c'), CTRL), None);
        assert_eq!(act(KeyCode::Char('p'), CTRL), None);
        assert_eq!(act(KeyCode::BackTab, SHIFT), None);
        assert_eq!(act(KeyCode::Tab, SHIFT), None);
        assert_eq!(act(KeyCode::F(1), NONE), None);
        assert_eq!(act(KeyCode::Up, ALT), None);
    }

    #[test]
    fn key_releases_are_ignored() {
        let mut k = key(KeyCode::Char('x'), NONE);
        k.kind = KeyEventKind::Release;
        k.state = KeyEventState::NONE;
        assert_eq!(action_for(&k), None);
        k.kind = KeyEventKind::Repeat;
        assert_eq!(action_for(&k), Some(Action::Insert('x')));
    }
}
