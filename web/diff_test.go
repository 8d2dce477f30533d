package web

import (
	"context"
	"github.com/zrviz/zrviz/request"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/imgedit"
	"github.com/zrviz/zrviz/internal/testutil"
)

// addZeroedDemo adds "after": the demo with /cases/fragmented.bin (inode 30) zeroed as the model
// says (256 slots NEW, their SIT bits cleared) and its inode rewritten to block 55296 (segment 100)
// as the kernel's node copy-on-write would.
func addZeroedDemo(t *testing.T, ts *testServer) {
	t.Helper()
	b := imgedit.Copy(t, demoZst)
	imgedit.Edit(t, b, func(e imgedit.Editor) {
		f, err := e.Img.File(30)
		if err != nil {
			t.Fatal(err)
		}
		ext, err := f.Extents()
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ext {
			for k := x.Index; k < x.Index+x.Count; k++ {
				if err := e.SetSlot(30, k, imgio.NewAddr); err != nil {
					t.Fatal(err)
				}
				if err := e.SetBlockValid(x.Addr+uint32(k-x.Index), false); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := e.MoveNode(30, 4096+100*512); err != nil {
			t.Fatal(err)
		}
	})
	img, err := imgio.OpenFileContext(context.Background(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.AddImage("after", "after.img", img); err != nil {
		t.Fatal(err)
	}
}

func TestDiffPage(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	addZeroedDemo(t, ts)

	doc, code := ts.getPage(t, "/")
	if code != http.StatusOK || doc.Find(testid("diff-link")).AttrOr("href", "") != "/diff" {
		t.Errorf("the images page links to /diff? status %d", code)
	}
	doc, code = ts.getPage(t, "/diff")
	if code != http.StatusOK || doc.Find(testid("diff-a")+" option").Length() != 2 {
		t.Errorf("/diff: status %d, want a picker of both images", code)
	}
	checkCSPSafe(t, doc)

	doc, code = ts.getPage(t, "/diff?a=demo&b=after")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	checkCSPSafe(t, doc)
	// Segment 3 (the data) lost 256 bits; segment 1 (the old inode) and 100 (the new) changed.
	var segs []string
	doc.Find(testid("diff-seg-changed")).Each(func(_ int, s *goquery.Selection) { segs = append(segs, s.AttrOr("data-segno", "")) })
	if strings.Join(segs, " ") != "1 3 100" {
		t.Errorf("changed segments on the map: %v, want 1 3 100", segs)
	}
	file := doc.Find(testid("diff-file"))
	if file.AttrOr("data-ino", "") != "30" || !strings.Contains(file.Find("h2").Text(), "/cases/fragmented.bin") {
		t.Errorf("file panel: %q", file.Find("h2").Text())
	}
	if n := file.Find(testid("diff-slot-changed")).Length(); n == 0 {
		t.Error("no changed slot on the block map")
	}
	// The first page lists 50 of the 256 changed slots, each linked to the block inspector on A.
	slot := file.Find(testid("diff-slot")).First()
	if file.Find(testid("diff-slot")).Length() != diffPer || slot.AttrOr("data-index", "") != "0" ||
		slot.Find(testid("slot-a")+" a").AttrOr("href", "") != "/images/demo/blocks/5634" ||
		strings.TrimSpace(slot.Find(testid("slot-b")).Text()) != "NEW" {
		t.Errorf("first slot row: %q", slot.Text())
	}
	if doc.Find(testid("diff-next")).AttrOr("href", "") != "/diff?a=demo&b=after&page=1" {
		t.Error("no link to the next page")
	}
	bit := doc.Find(`[data-testid="diff-segment"][data-segno="100"] ` + testid("bit-b"))
	if bit.AttrOr("href", "") != "/images/after/blocks/55296" {
		t.Errorf("segment 100's bit links %q, want the new inode block in B", bit.AttrOr("href", ""))
	}

	doc, _ = ts.getPage(t, "/diff?a=demo&b=after&page=5")
	if n := doc.Find(testid("diff-slot")).Length(); n != 6 {
		t.Errorf("page 5 lists %d slots, want the last 6 of 256", n)
	}
	doc, _ = ts.getPage(t, "/diff?a=demo&b=demo")
	if doc.Find(testid("diff-empty")).Length() != 1 {
		t.Error("an image against itself is not said to be equal")
	}
}

// TestDiffPageCheck: B held against the model of a run on A, from the diff page.
func TestDiffPageCheck(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	addZeroedDemo(t, ts)
	ops := url.QueryEscape("zero /cases/fragmented.bin 0 1048576")
	doc, code := ts.getPage(t, "/diff?a=demo&b=after&mode=per-block&ops="+ops)
	if code != http.StatusOK || !strings.Contains(doc.Find(testid("check-verdict")).Text(), "agrees") {
		t.Errorf("status %d, verdict %q", code, doc.Find(testid("check-verdict")).Text())
	}
	if !strings.Contains(doc.Find(testid("check-explained")).Text(), "f2fs_do_write_node_page") {
		t.Errorf("the inode's move is not explained: %q", doc.Find(testid("check-explained")).Text())
	}
	// The demo as its own after-image: the 256 slots and SIT bits differ, marked on the maps.
	doc, _ = ts.getPage(t, "/diff?a=demo&b=demo&mode=batched&ops="+ops)
	if !strings.Contains(doc.Find(testid("check-verdict")).Text(), "512 differences") {
		t.Errorf("verdict %q", doc.Find(testid("check-verdict")).Text())
	}
	first := doc.Find(testid("check-difference")).First()
	if !strings.HasPrefix(first.Text(), "/cases/fragmented.bin file block 0 (i_addr[0]): model NEW, image 5634") ||
		first.Find("a").AttrOr("href", "") != "/images/demo/file?path=%2Fcases%2Ffragmented.bin#slot=0" {
		t.Errorf("first difference %q", first.Text())
	}
	if n := doc.Find(`[data-testid="diff-seg-changed"][data-differs]`).Length(); n != 0 {
		t.Errorf("%d changed segments, want none (A against itself)", n)
	}
	if n := doc.Find(`.dseg.differs`).Length(); n != 1 {
		t.Errorf("%d segments marked as differing, want 1 (segment 3)", n)
	}
	if n := doc.Find(testid("diff-blockmap") + " [data-differs]").Length(); n == 0 {
		t.Error("no differing slot marked on the file's block map")
	}
	doc, _ = ts.getPage(t, "/diff?a=demo&b=after&ops="+url.QueryEscape("zero /nothere 0 1"))
	if doc.Find(testid("check-error")).Length() != 1 {
		t.Error("a path that does not exist is not said")
	}
}

func TestDiffPageRefusesAnotherFilesystem(t *testing.T) {
	mkfs := testutil.NeedTool(t, "mkfs.f2fs")
	ts := mustOpenServer(t, Config{MaxMemory: 64 << 20})
	other := filepath.Join(t.TempDir(), "other.img")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(other, 64<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mkfs, "-q", "-f", other).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.f2fs: %v\n%s", err, out)
	}
	img, err := imgio.OpenFileContext(context.Background(), other, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.AddImage("other", "other.img", img); err != nil {
		t.Fatal(err)
	}
	doc, code := ts.getPage(t, "/diff?a=demo&b=other")
	if code != http.StatusUnprocessableEntity || !strings.Contains(doc.Find(testid("diff-error")).Text(), "different filesystems") {
		t.Errorf("status %d, error %q", code, doc.Find(testid("diff-error")).Text())
	}
	// With a check of operations whose model the budget could not hold, the answer is still the
	// 422: another filesystem is refused before anything is reserved (a refused request costs
	// nothing), never a 503 "busy".
	ops := strings.Repeat("write /seed/bench64.bin 0 1GiB\ngc 1\n", 30)
	doc, code = ts.getPage(t, "/diff?a=demo&b=other&ops="+url.QueryEscape(ops))
	if code != http.StatusUnprocessableEntity || !strings.Contains(doc.Find(testid("diff-error")).Text(), "different filesystems") {
		t.Errorf("with ops=: status %d, error %q", code, doc.Find(testid("diff-error")).Text())
	}
	if _, code := ts.getPage(t, "/diff?a=demo&b=nothere"); code != http.StatusNotFound {
		t.Errorf("a missing image: %d, want 404", code)
	}
}

func TestBrowserDiff(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: headless Chromium")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	addZeroedDemo(t, ts)
	ctx := tab(t)
	// Pick two on the images page.
	do(t, ctx, chromedp.Navigate(ts.ts.URL+"/"), chromedp.Click(testid("diff-link")))
	do(t, ctx, chromedp.WaitVisible(testid("diff-go")))
	do(t, ctx, chromedp.SetValue(testid("diff-a"), "demo"), chromedp.SetValue(testid("diff-b"), "after"), chromedp.Click(testid("diff-go")))
	do(t, ctx, chromedp.WaitVisible(testid("diff-segmap")))
	waitJS(t, ctx, `document.querySelectorAll('[data-testid="diff-seg-changed"]').length === 3`, 10*time.Second)
	screenshot(t, ctx, "diff")
	// The file's section from its top (its block map), not its middle, where ScrollIntoView puts a
	// section taller than the screen.
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="diff-file"]').scrollIntoView({block: 'start'})`))
	screenshot(t, ctx, "diff-file")
	// A changed segment's cell leads to its entry, whose bit leads into the block inspector.
	do(t, ctx, chromedp.Click(`[data-testid="diff-seg-changed"][data-segno="100"]`))
	waitJS(t, ctx, `location.hash === '#seg-100'`, 5*time.Second)
	do(t, ctx, chromedp.Click(`[data-testid="diff-segment"][data-segno="100"] [data-testid="bit-b"]`))
	do(t, ctx, chromedp.WaitVisible(`#hexdump`))
	waitJS(t, ctx, `location.pathname === '/images/after/blocks/55296'`, 10*time.Second)

	// Check B as an after-image: the demo against itself differs, marked on the maps.
	do(t, ctx, chromedp.Navigate(ts.ts.URL+"/diff?a=demo&b=demo"), chromedp.WaitVisible(testid("check-ops")),
		chromedp.SendKeys(testid("check-ops"), "zero /cases/fragmented.bin 0 1048576"),
		chromedp.SetValue(testid("check-mode"), "batched"), chromedp.Click(testid("check-go")))
	do(t, ctx, chromedp.WaitVisible(testid("check-verdict")))
	if v := text(t, ctx, "check-verdict"); !strings.Contains(v, "512 differences") {
		t.Errorf("verdict %q", v)
	}
	do(t, ctx, chromedp.ScrollIntoView(testid("diff-check")))
	screenshot(t, ctx, "diff-check")
}

// TestDiffOpsBoxLabel: the after-image check's ops box names the operations it takes, from the ops
// language's registry, not "zero …" alone (issue 38).
func TestDiffOpsBoxLabel(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	doc, code := ts.getPage(t, "/diff?a=demo&b=demo")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	hint := doc.Find(testid("check-ops-hint")).Text()
	for _, o := range request.Ops() {
		if !strings.Contains(hint, o.Kind) {
			t.Errorf("the ops box's label %q does not name %s", hint, o.Kind)
		}
	}
}
