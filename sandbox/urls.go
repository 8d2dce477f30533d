package sandbox

import "net/url"

// PlayerURL is the permalink that opens the player on a canonical slot list (GET /sandbox/run,
// served by the player): /sandbox/run?slots=...&mode=... with mode "per-block", "batched" or
// "both". Lists longer than [MaxPermalink] should not be made into links.
func PlayerURL(slots, mode string) string {
	return "/sandbox/run?" + url.Values{"slots": {slots}, "mode": {mode}}.Encode()
}

// PageURL is the sandbox page with slots in its text box (GET /sandbox?slots=...).
func PageURL(slots string) string {
	if slots == "" {
		return "/sandbox"
	}
	return "/sandbox?" + url.Values{"slots": {slots}}.Encode()
}
