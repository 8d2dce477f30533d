package glossary

import (
	"slices"
	"strings"
	"testing"
)

// The terms issue 9 asks the glossary to explain, by slug.
var required = []string{
	"null-addr", "new-addr", "compress-addr", "dnode", "inode", "direct-node", "indirect-node", "dnode-chunk",
	"slot", "physical-run", "pending-run", "flush", "flush-discontiguous", "flush-end-of-chunk",
	"flush-end-of-range", "flush-after-error", "f2fs-invalidate-blocks", "sit", "sit-entry", "valid-map",
	"sit-lock", "segment", "section", "current-segment", "dirty", "prefree", "free", "checkpoint",
	"keep-size", "fill-zero", "eopnotsupp", "enospc", "efscorrupted",
	// issue 28: punch hole and truncate
	"f2fs-truncate-data-blocks-range", "f2fs-is-valid-blkaddr", "truncate-node", "wrongly-cleared",
	// issue 36: unlink
	"orphan-inode", "f2fs-remove-inode-page",
}

func TestEntries(t *testing.T) {
	all := All()
	seen := map[string]bool{}
	groups := Groups()
	for i, e := range all {
		if !validSlug(e.Slug) {
			t.Errorf("entry %d: slug %q is not lower case with hyphens", i, e.Slug)
		}
		if seen[e.Slug] {
			t.Errorf("slug %q twice", e.Slug)
		}
		seen[e.Slug] = true
		if e.Term == "" || e.Text == "" || e.OnDisk == "" || e.Source == "" {
			t.Errorf("%s: every entry needs a term, a text, the on-disk value and the kernel source: %+v", e.Slug, e)
		}
		// One or two plain sentences.
		if n := strings.Count(e.Text, ". ") + 1; n > 2 || !strings.HasSuffix(e.Text, ".") {
			t.Errorf("%s: text of %d sentences, want one or two ending with a full stop: %q", e.Slug, n, e.Text)
		}
		if !slices.Contains(groups, e.Group) {
			t.Errorf("%s: group %q is not one of %v", e.Slug, e.Group, groups)
		}
		if i > 0 && slices.Index(groups, e.Group) < slices.Index(groups, all[i-1].Group) {
			t.Errorf("%s: listed after a later group", e.Slug)
		}
		for _, m := range e.Match {
			if strings.TrimSpace(m) != m || m == "" {
				t.Errorf("%s: match %q", e.Slug, m)
			}
		}
	}
	for _, e := range all {
		for _, s := range e.See {
			if !seen[s] {
				t.Errorf("%s: see %q, which is no entry", e.Slug, s)
			}
		}
	}
	for _, s := range required {
		if !seen[s] {
			t.Errorf("no entry %q", s)
		}
	}
}

// Two entries must not claim the same words, or running text would link the wrong one.
func TestMatchesAreUnique(t *testing.T) {
	owner := map[string]string{}
	for _, e := range All() {
		for _, m := range e.Match {
			if o, ok := owner[m]; ok {
				t.Errorf("%q matches both %s and %s", m, o, e.Slug)
			}
			owner[m] = e.Slug
		}
	}
}

func TestLookupAndCopies(t *testing.T) {
	e, ok := Lookup("sit-lock")
	if !ok || e.Term != "SIT lock (sentry_lock)" || Anchor(e.Slug) != "term-sit-lock" {
		t.Fatalf("Lookup(sit-lock) = %+v, %v", e, ok)
	}
	if _, ok := Lookup("no-such-term"); ok {
		t.Error("Lookup found an unknown slug")
	}
	a := All()
	a[0].Text = "changed"
	if All()[0].Text == "changed" {
		t.Error("All shares its entries between callers")
	}
}

func TestValidSlug(t *testing.T) {
	for s, want := range map[string]bool{"sit": true, "new-addr": true, "f2fs-invalidate-blocks": true,
		"": false, "-a": false, "a-": false, "a--b": false, "New-addr": false, "a_b": false, "a b": false} {
		if got := validSlug(s); got != want {
			t.Errorf("validSlug(%q) = %v, want %v", s, got, want)
		}
	}
}

// validSlug reports whether s is a slug: lower-case letters and digits in words joined by single
// hyphens.
func validSlug(s string) bool {
	if s == "" || strings.HasPrefix(s, "-") || strings.HasSuffix(s, "-") || strings.Contains(s, "--") {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}
