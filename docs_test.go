package zrviz_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCitedDocumentsExist: every document a test cites is in the repository, and every section of
// docs/kernel-semantics.md a test cites is one of its headings.
func TestCitedDocumentsExist(t *testing.T) {
	spec, err := os.ReadFile("docs/kernel-semantics.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#{2,3} (\d+(?:\.\d+)?)\.? `).FindAllStringSubmatch(string(spec), -1) {
		sections[m[1]] = true
	}
	doc := regexp.MustCompile(`\b((?:docs|imgio/demo)/[\w./-]+\.md)\b`)
	cite := regexp.MustCompile(`kernel-semantics\.md((?:,? ?§\d+(?:\.\d+)?(?:[-–]§?\d+)?(?: rows?)?(?: \d+,?)*)+)`)
	sect := regexp.MustCompile(`§(\d+(?:\.\d+)?)(?:[-–]§?(\d+))?`)
	gone := []string{"zero-range.md", "f2fs-format.md", "fixtures README", "fixtures/README"}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != "." {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") && !strings.HasSuffix(path, ".test.js") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		src := strings.ReplaceAll(string(b), "\n//", "")
		for _, g := range gone {
			if strings.Contains(src, g) && path != "docs_test.go" {
				t.Errorf("%s cites %q, which is not in the repository", path, g)
			}
		}
		for _, m := range doc.FindAllStringSubmatch(src, -1) {
			if _, err := os.Stat(m[1]); err != nil {
				t.Errorf("%s cites %s: %v", path, m[1], err)
			}
		}
		for _, m := range cite.FindAllStringSubmatch(src, -1) {
			for _, s := range sect.FindAllStringSubmatch(m[1], -1) {
				for _, n := range []string{s[1], s[2]} {
					if n != "" && !sections[n] {
						t.Errorf("%s cites docs/kernel-semantics.md §%s, which has no such section", path, n)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
