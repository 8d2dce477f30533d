package web

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestSiteSurvey: the static site surveys a local 8 GiB sparse image (mkfs.f2fs + sload.f2fs, an
// Android-like tree: 2,400 apps' files under /data/app, photos under /data/media, one 64 MiB file)
// opened from disk: the page shows the survey under way (its progress answers while the worker
// computes) and then the totals `zrviz survey --json` gives for the same image, and every request
// the host got was a GET of a file of the site.
func TestSiteSurvey(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the site and drives a browser")
	}
	t.Parallel()
	src := axeSource(t)
	dir := builtSite(t)
	files := map[string][]byte{}
	for i := range 2400 {
		n := 4096 + (i*7919)%(40<<10)
		files[fmt.Sprintf("data/app/com.example.app%04d-1/base.apk", i)] = pattern(n, i)
	}
	for i := range 40 {
		files[fmt.Sprintf("data/media/0/DCIM/IMG_%04d.jpg", i)] = pattern(256<<10+i*8192, 10000+i)
	}
	files["data/media/0/big.mp4"] = pattern(64<<20, 99)
	img := makeF2FS(t, 8<<30, files)
	host, base := serveSite(t, dir)

	out, err := exec.Command(siteCLI, "survey", "--json", "--image", img).Output()
	if err != nil {
		t.Fatalf("zrviz survey --json: %v", err)
	}
	var cli struct {
		Totals struct {
			Files int `json:"files"`
			Ops   struct {
				Zero map[string]struct {
					Calls uint64 `json:"calls"`
				} `json:"zero"`
			} `json:"ops"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(out, &cli); err != nil {
		t.Fatal(err)
	}
	if cli.Totals.Files != 2441 {
		t.Fatalf("zrviz survey: %d files, want 2,441", cli.Totals.Files)
	}

	tab := browser(t)
	ctx := siteTab(t, tab, base)
	do(t, ctx, chromedp.SetUploadFiles(chromedp.CSS(testid("local-input")), []string{img}))
	waitJS(t, ctx, `document.querySelector('[data-testid="local-link"]') !== null`, 2*time.Minute)
	id := strings.TrimPrefix(js[string](t, ctx, `document.querySelector('[data-testid="local-link"]').getAttribute('href')`), "/images/")
	do(t, ctx, chromedp.Navigate(base+"/images/"+id))
	do(t, ctx, chromedp.WaitVisible(testid("image-survey")), chromedp.Click(testid("image-survey")))
	start := time.Now()
	waitJS(t, ctx, `document.getElementById('survey')?.dataset.state === 'done'`, 5*time.Minute)
	took := time.Since(start)
	if n := js[string](t, ctx, `document.getElementById('survey').dataset.partial || '0'`); n == "0" {
		t.Error("the page never showed the survey under way: no progress answer came while it ran")
	}
	pb, b := cli.Totals.Ops.Zero["per-block"].Calls, cli.Totals.Ops.Zero["batched"].Calls
	want := fmt.Sprintf("makes %s f2fs_invalidate_blocks calls instead of %s", group(b), group(pb))
	if h := text(t, ctx, "survey-headline"); !strings.Contains(h, want) || !strings.HasPrefix(h, "2,441 regular files") {
		t.Errorf("the site's headline %q, want %q as zrviz survey says", h, want)
	}
	if got := text(t, ctx, "survey-status"); got != "done: 2,441 files" {
		t.Errorf("status %q", got)
	}
	axeCheck(t, ctx, src, "site survey")
	shot(t, ctx, "site-survey")
	t.Logf("the site surveyed 2,441 files of an 8 GiB image in %v (page poll to done); load average %s", took, loadAverage())
	host.checkOnlyFiles(t)
}

// pattern is n bytes of a pattern seeded by k (sload.f2fs writes every block it reads).
func pattern(n, k int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31+k) | 1
	}
	return b
}

// group writes n with thousands separators, as the page's int() does.
func group(n uint64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
