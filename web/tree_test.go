package web

import (
	"fmt"
	"github.com/zrviz/zrviz/internal/testutil"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// makeWideImage builds an F2FS image (mkfs.f2fs, sload.f2fs) whose /wide directory holds 450 files
// and, among them in name order, the directory /wide/f300-sub with 3 files; the root holds /wide and
// /z.txt. It returns the raw image's path.
func makeWideImage(t *testing.T) string {
	t.Helper()
	mkfs := testutil.NeedAnyTool(t, "mkfs.f2fs")
	sload := testutil.NeedAnyTool(t, "sload.f2fs")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	sub := filepath.Join(src, "wide", "f300-sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 450 {
		if err := os.WriteFile(filepath.Join(src, "wide", fmt.Sprintf("f%03d", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("s%d", i)), []byte("y"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(src, "z.txt"), []byte("z"), 0o644); err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(dir, "wide.img")
	if err := os.WriteFile(raw, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(raw, 64<<20); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{{mkfs, "-q", "-f", raw}, {sload, "-f", src, raw}} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	return raw
}

// uploadWide uploads makeWideImage's image and returns its id.
func uploadWide(t *testing.T, ts *testServer) string {
	t.Helper()
	raw := makeWideImage(t)
	f, err := os.Open(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	var up struct{ ID string }
	if code := ts.post(t, "?name=wide.img", f, st.Size(), "application/octet-stream", &up); code != http.StatusCreated {
		t.Fatalf("upload: %d", code)
	}
	return up.ID
}

// TestTreePartialDirectories: the image page lists at most treePerDir entries of a directory and
// marks it partial with its last name shown; the others are complete; the entries past the limit
// are not on the page; the /dir API's next page starts right after.
func TestTreePartialDirectories(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	id := uploadWide(t, ts)
	doc, code := ts.getPage(t, "/images/"+id)
	if code != 200 {
		t.Fatalf("image page: %d", code)
	}
	tree := doc.Find(testid("file-tree"))
	if v, _ := tree.Attr("data-page"); v != fmt.Sprint(treePerDir) {
		t.Errorf("data-page %q, want %d", v, treePerDir)
	}
	wide := doc.Find(testid("file-entry") + `[data-path="/wide"]`)
	if st, _ := wide.Attr("data-state"); st != "partial" {
		t.Errorf("/wide: data-state %q, want partial", st)
	}
	want := fmt.Sprintf("f%03d", treePerDir-1) // f000 … f199 shown (f300-sub sorts after f300)
	if after, _ := wide.Attr("data-after"); after != want {
		t.Errorf("/wide: data-after %q, want %q", after, want)
	}
	if n := doc.Find(testid("file-entry") + `[data-path^="/wide/"]`).Length(); n != treePerDir {
		t.Errorf("%d entries of /wide on the page, want %d", n, treePerDir)
	}
	for _, p := range []string{"/", "/z.txt"} {
		if doc.Find(testid("file-entry")+fmt.Sprintf(`[data-path=%q]`, p)).Length() != 1 {
			t.Errorf("%s not on the page", p)
		}
	}
	if st, _ := doc.Find(testid("file-entry") + `[data-path="/"]`).Attr("data-state"); st != "complete" {
		t.Errorf("/: data-state %q, want complete", st)
	}
	if doc.Find(testid("file-entry")+`[data-path="/wide/f200"]`).Length() != 0 {
		t.Error("/wide/f200 is on the page past the limit")
	}
	var page dirBody
	if code := ts.get(t, "/api/images/"+id+"/dir?path=/wide&after="+want+"&limit=3", &page); code != 200 ||
		len(page.Entries) != 3 || page.Entries[0].Path != "/wide/f200" || !page.More {
		t.Errorf("next page: %d %+v", code, page)
	}
}

// TestBrowserTree: in Chromium, a partial directory's "more" row fetches the next pages until the
// directory is whole, a directory first met in a fetched page opens on demand, and closing a
// directory hides its subtree.
func TestBrowserTree(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	id := uploadWide(t, ts)
	ctx := tab(t)
	count := `document.querySelectorAll('[data-testid="file-entry"][data-path^="/wide/"]:not([hidden])').length`
	do(t, ctx, chromedp.Navigate(ts.ts.URL+"/images/"+id),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="tree-more-button"]`)))
	waitJS(t, ctx, count+` === 200`, 10*time.Second)
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="tree-more-button"]`)))
	waitJS(t, ctx, count+` === 400`, 10*time.Second)
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-testid="tree-more-button"]`)))
	// 450 files and the subdirectory, whose own entries are not listed until it is opened.
	waitJS(t, ctx, count+` === 451 && !document.querySelector('[data-testid="tree-more"]')`, 10*time.Second)
	sub := `[data-testid="file-entry"][data-path="/wide/f300-sub"]`
	if st, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('`+sub+`').dataset.state`)); err != nil || st != "closed" {
		t.Fatalf("/wide/f300-sub: state %q %v, want closed", st, err)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(sub+` [data-testid="tree-toggle"]`)))
	waitJS(t, ctx, count+` === 454 && document.querySelector('`+sub+`').dataset.state === 'complete'`, 10*time.Second)
	// Entries are in name order: the subdirectory's right after it, then f301.
	order, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="file-entry"]')].map((e) => e.dataset.path).filter((p) => /^\/wide\/f30[01]/.test(p))`))
	if err != nil || strings.Join(order, " ") != "/wide/f300 /wide/f300-sub /wide/f300-sub/s0 /wide/f300-sub/s1 /wide/f300-sub/s2 /wide/f301" {
		t.Errorf("order %v %v", order, err)
	}
	// A file links to its block map and the player, as the server's entries do.
	if href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-path="/wide/f449"] [data-testid="file-link"]').getAttribute('href')`)); err != nil ||
		href != "/images/"+id+"/file?path=%2Fwide%2Ff449" {
		t.Errorf("f449's link %q %v", href, err)
	}
	// Closing /wide hides all 454; opening it shows them again, f300-sub's open too.
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-path="/wide"] [data-testid="tree-toggle"]`)))
	waitJS(t, ctx, count+` === 0`, 5*time.Second)
	do(t, ctx, chromedp.Click(chromedp.CSS(`[data-path="/wide"] [data-testid="tree-toggle"]`)))
	waitJS(t, ctx, count+` === 454`, 5*time.Second)
	// Closing f300-sub hides its three only.
	do(t, ctx, chromedp.Click(chromedp.CSS(sub+` [data-testid="tree-toggle"]`)))
	waitJS(t, ctx, count+` === 451`, 5*time.Second)
}
