package zrviz_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The citations TestCitedDocumentsExist follows.
var (
	// mdPath is a path to a Markdown document: root-relative (docs/protocol.md), relative to the
	// citing file (protocol.md in docs/, testdata/README.md in gc/), or outside (../shared/x.md, /work/…).
	mdPath = regexp.MustCompile(`(?:\.\./|/)?(?:[\w.-]+/)*[\w-]+\.md\b`)
	// semCite is a citation of docs/kernel-semantics.md's numbered sections: "§7.3", "§7–§8, §11 rows 6, 7".
	semCite = regexp.MustCompile(`kernel-semantics\.md((?:,? ?(?:and )?§\d+(?:\.\d+)?(?:[-–]§?\d+(?:\.\d+)?)?(?: rows? \d+(?:(?:,? and |, |–|-)\d+)*)?)+)`)
	semSect = regexp.MustCompile(`§(\d+(?:\.\d+)?)(?:[-–]§?(\d+(?:\.\d+)?))?(?: rows? (\d+(?:(?:,? and |, |–|-)\d+)*))?`)
	// namedCite is a citation of a section by its heading: docs/protocol.md, "Rooms".
	namedCite = regexp.MustCompile(`([\w/-]+\.md),? "([^"]+)"`)
	// heading is a Markdown heading; numbered is a numbered one ("## 7. …", "### 7.3 …").
	heading  = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	numbered = regexp.MustCompile(`^(\d+(?:\.\d+)?)\.? `)
	// tableRow is a row of a Markdown table whose first cell is a number (§11's worked examples).
	tableRow = regexp.MustCompile(`(?m)^\| *(\d+) *\|`)
	// wrapped joins a comment or paragraph broken over lines, so a citation split by the wrap is
	// read whole ("imgio/demo/" + "README.md", "kernel-semantics.md" + "§7").
	wrappedPath = regexp.MustCompile(`/\n[ \t]*(?://|\*|#)?[ \t]*`)
	wrapped     = regexp.MustCompile(`\n[ \t]*(?://|\*)?[ \t]*`)
)

// gone are documents that tests once cited and that are not in the repository (the brief's specs
// and fixtures notes outside it): docs/kernel-semantics.md is the project's own spec, and
// imgio/demo/README.md describes the demo image.
var gone = []string{"zero-range.md", "f2fs-format.md", "fixtures README", "fixtures/README"}

// doc is a Markdown document of the repository: its headings and, for each numbered section, the
// numbers of its table rows.
type doc struct {
	headings []string
	sections map[string]bool
	rows     map[string]map[int]bool
}

func readDoc(t *testing.T, path string) *doc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := &doc{sections: map[string]bool{}, rows: map[string]map[int]bool{}}
	src := string(b)
	hs := heading.FindAllStringSubmatchIndex(src, -1)
	for i, h := range hs {
		title := src[h[2]:h[3]]
		d.headings = append(d.headings, title)
		m := numbered.FindStringSubmatch(title)
		if m == nil {
			continue
		}
		d.sections[m[1]] = true
		end := len(src)
		if i+1 < len(hs) {
			end = hs[i+1][0]
		}
		rows := map[int]bool{}
		for _, r := range tableRow.FindAllStringSubmatch(src[h[1]:end], -1) {
			n, _ := strconv.Atoi(r[1])
			rows[n] = true
		}
		d.rows[m[1]] = rows
	}
	return d
}

// hasHeading reports whether d has a heading that is name or begins with it ("Rooms" names
// "Rooms: a class follows a presenter").
func (d *doc) hasHeading(name string) bool {
	for _, h := range d.headings {
		h = strings.Trim(h, "`")
		if h == name || strings.HasPrefix(h, name) && strings.ContainsAny(h[len(name):len(name)+1], ": (—,") {
			return true
		}
	}
	return false
}

// numbers expands a list of row numbers: "6, 7 and 11", "13–14".
func numbers(list string) []int {
	if list == "" {
		return nil
	}
	var out []int
	for _, part := range regexp.MustCompile(`,? and |, `).Split(list, -1) {
		lo, hi, ok := strings.Cut(strings.ReplaceAll(part, "–", "-"), "-")
		a, _ := strconv.Atoi(lo)
		b := a
		if ok {
			b, _ = strconv.Atoi(hi)
		}
		for n := a; n <= b && n-a < 100; n++ {
			out = append(out, n)
		}
	}
	return out
}

// TestCitedDocumentsExist: every document a test, a test's comment, a JavaScript test or a document
// cites is in the repository (a path relative to the root or to the citing file), and every section
// it names is there: docs/kernel-semantics.md's numbered sections (§7.3, a range §7–§8, and rows of
// §11's table), and sections named by heading (docs/protocol.md, "Rooms"). Product code's citations
// of docs/ are held to the same.
func TestCitedDocumentsExist(t *testing.T) {
	docs := map[string]*doc{}
	docAt := func(path string) *doc {
		if docs[path] == nil {
			docs[path] = readDoc(t, path)
		}
		return docs[path]
	}
	sem := docAt("docs/kernel-semantics.md")
	if len(sem.sections) < 14 || len(sem.rows["11"]) < 16 {
		t.Fatalf("docs/kernel-semantics.md: %d numbered sections, %d rows in §11; the headings or the table are not read", len(sem.sections), len(sem.rows["11"]))
	}
	// resolve finds a cited document: from the root, else beside the citing file.
	resolve := func(from, cited string) (string, bool) {
		if strings.HasPrefix(cited, "/") {
			return "", false
		}
		for _, p := range []string{filepath.Clean(cited), filepath.Join(filepath.Dir(from), cited)} {
			if strings.HasPrefix(p, "..") {
				continue
			}
			if _, err := os.Stat(p); err == nil {
				return p, true
			}
		}
		return "", false
	}
	cites := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		test := strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, ".test.js")
		md := strings.HasSuffix(path, ".md")
		product := !test && (strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".js") || strings.HasSuffix(path, ".templ"))
		if d.IsDir() || !test && !md && !product || path == "docs_test.go" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		src := wrapped.ReplaceAllString(wrappedPath.ReplaceAllString(string(b), "/"), " ")
		if test || md {
			for _, g := range gone {
				if strings.Contains(src, g) {
					t.Errorf("%s cites %q, which is not in the repository", path, g)
				}
			}
			for _, m := range mdPath.FindAllStringIndex(src, -1) {
				cited := src[m[0]:m[1]]
				if m[0] > 0 && strings.ContainsAny(src[m[0]-1:m[0]], ":.") { // a URL's path (https://…/x.md)
					continue
				}
				cites++
				if _, ok := resolve(path, cited); !ok {
					t.Errorf("%s cites %s, which is not in the repository", path, cited)
				}
			}
		} else {
			for _, m := range regexp.MustCompile(`\bdocs/[\w-]+\.md\b`).FindAllString(src, -1) {
				cites++
				if _, err := os.Stat(m); err != nil {
					t.Errorf("%s cites %s: %v", path, m, err)
				}
			}
		}
		// Sections of docs/kernel-semantics.md; inside it, its own bare § references.
		check := func(num, rows string) {
			if num == "" {
				return
			}
			cites++
			if !sem.sections[num] {
				t.Errorf("%s cites docs/kernel-semantics.md §%s, which has no such section", path, num)
				return
			}
			for _, n := range numbers(rows) {
				if !sem.rows[num][n] {
					t.Errorf("%s cites docs/kernel-semantics.md §%s row %d, which its table does not have", path, num, n)
				}
			}
		}
		var sects [][]string
		if path == "docs/kernel-semantics.md" {
			sects = semSect.FindAllStringSubmatch(src, -1)
		} else {
			for _, m := range semCite.FindAllStringSubmatch(src, -1) {
				sects = append(sects, semSect.FindAllStringSubmatch(m[1], -1)...)
			}
		}
		for _, s := range sects {
			check(s[1], s[3])
			check(s[2], "")
		}
		// Sections named by their heading.
		for _, m := range namedCite.FindAllStringSubmatch(src, -1) {
			p, ok := resolve(path, m[1])
			if !ok {
				if p, ok = resolve(path, "docs/"+filepath.Base(m[1])); !ok {
					continue // reported above when the citing file is a test or a document
				}
			}
			cites++
			if !docAt(p).hasHeading(m[2]) {
				t.Errorf("%s cites %s, %q: no heading of %s is or begins with it", path, m[1], m[2], p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cites < 50 {
		t.Errorf("%d citations followed: the patterns no longer match how the repository cites", cites)
	}
	t.Logf("%d citations followed", cites)
}

// machinePath is an absolute path into one machine's folders: the session machines' /work/…, a home.
var machinePath = regexp.MustCompile(`(?:^|[\s("'=` + "`" + `])(/work/|/root/|/home/)[\w.-]`)

// TestFixturesRebuildFromAClone: the commands that rebuild the kernel-written fixtures (the fixture
// folders' READMEs, scripts/oracle) name no absolute path of the machine that made them, so anyone
// can run them as written from a clone (scripts/oracle/prepare finds the shared oracle beside it).
func TestFixturesRebuildFromAClone(t *testing.T) {
	var files []string
	for _, root := range []string{"scripts/oracle", "core/testdata", "gc/testdata", "imgio/testdata"} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".sh") || strings.HasSuffix(p, ".py") || strings.HasSuffix(p, ".ops") || filepath.Ext(p) == "" && !strings.Contains(filepath.Base(p), ".") && isScript(p) {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) < 10 {
		t.Fatalf("found %d fixture scripts and READMEs; the walk is broken", len(files))
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := machinePath.FindString(line); m != "" {
				t.Errorf("%s:%d names a machine's path (%q): use ../shared/oracle, the script's own folder or an env var", p, i+1, strings.TrimSpace(m))
			}
		}
	}
}

// isScript is a file that starts with #!.
func isScript(p string) bool {
	b, err := os.ReadFile(p)
	return err == nil && strings.HasPrefix(string(b), "#!")
}
