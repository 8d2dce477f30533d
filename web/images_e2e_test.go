package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"
)

// TestImagesPageRows: the images page shows each image's name, format, size and upload time; only
// uploads have a delete button, labelled with the image's name.
func TestImagesPageRows(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	code, up := ts.upload(t, "<b>mine</b>.img.gz", fixtureVariant(t, "basic", "rows"))
	if code != 201 {
		t.Fatal(code)
	}
	doc, _ := ts.getPage(t, "/")
	row := doc.Find(testid("image-item") + `[data-id="` + up.ID + `"]`)
	if row.Length() != 1 {
		t.Fatalf("upload %s not listed", up.ID)
	}
	if got := row.Find(testid("image-link")).Text(); got != "b_mine_b_.img.gz" {
		t.Errorf("name %q", got)
	}
	added := row.Find(testid("image-added"))
	if dt, _ := added.Attr("datetime"); dt != up.Added.UTC().Format("2006-01-02 15:04:05")+"Z" || !strings.HasSuffix(added.Text(), " UTC") {
		t.Errorf("upload time %q (datetime %q), want %v", added.Text(), dt, up.Added)
	}
	cells := row.Find("td").Map(func(_ int, s *goquery.Selection) string { return strings.TrimSpace(s.Text()) })
	if len(cells) < 4 || cells[2] != "gzip" || cells[3] != "128 MiB" {
		t.Errorf("row cells %q, want format gzip and size 128 MiB", cells)
	}
	del := row.Find(testid("image-delete"))
	if label, _ := del.Attr("aria-label"); del.Length() != 1 || goquery.NodeName(del) != "button" || label != "Delete b_mine_b_.img.gz" {
		t.Errorf("delete control: %d, <%s> %q", del.Length(), goquery.NodeName(del), label)
	}
	if n := doc.Find(testid("image-item") + `[data-id="demo"] ` + testid("image-delete")).Length(); n != 0 {
		t.Errorf("the demo has a delete button")
	}
}

// TestBrowserImagesDelete: in Chromium, an uploaded image's delete button is reached with the
// keyboard and asks for a second press; the row goes, the image is gone from the server, and a row
// added by an upload on the page can be deleted the same way.
func TestBrowserImagesDelete(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: browser")
	}
	t.Parallel()
	tab := browser(t)
	ts := mustOpenServer(t, Config{})
	code, up := ts.upload(t, "listed.img.gz", fixtureVariant(t, "basic", "browser"))
	if code != 201 {
		t.Fatal(code)
	}
	ctx := tab(t)
	btn := `[data-testid="image-delete"][data-id="` + up.ID + `"]`
	do(t, ctx, chromedp.Navigate(ts.ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(btn)))
	// Reach the button with Tab from the image's inspect link, as a keyboard user would.
	do(t, ctx, chromedp.Focus(chromedp.CSS(`[data-testid="image-item"][data-id="`+up.ID+`"] td:nth-child(6) a`)),
		chromedp.KeyEvent("\t"))
	waitJS(t, ctx, `document.activeElement && document.activeElement.matches('`+btn+`')`, 10*time.Second)
	do(t, ctx, chromedp.KeyEvent("\r"))
	waitJS(t, ctx, `document.querySelector('`+btn+`').textContent === 'Confirm delete' && !document.getElementById('images-msg').hidden`, 10*time.Second)
	screenshot(t, ctx, "images-delete-confirm")
	if code := ts.get(t, "/api/images/"+up.ID, nil); code != 200 {
		t.Fatalf("the first press deleted already: %d", code)
	}
	do(t, ctx, chromedp.KeyEvent("\r"))
	waitJS(t, ctx, `!document.querySelector('[data-testid="image-item"][data-id="`+up.ID+`"]') && /Deleted listed\.img\.gz/.test(document.getElementById('images-msg').textContent)`, 10*time.Second)
	if code := ts.get(t, "/api/images/"+up.ID, nil); code != 404 {
		t.Errorf("after the delete: %d, want 404", code)
	}
	// A row added by an upload on the page.
	img := filepath.Join(t.TempDir(), "new.img.gz")
	if err := os.WriteFile(img, fixtureVariant(t, "basic", "page"), 0o644); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, chromedp.SetUploadFiles(chromedp.CSS(`[data-testid="upload-input"]`), []string{img}))
	waitJS(t, ctx, `!!document.querySelector('[data-testid="upload-link"]')`, time.Minute)
	added, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="upload-link"]').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	nb := `[data-testid="image-delete"][data-id="` + added + `"]`
	if s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('[data-testid="image-item"][data-id="`+added+`"] [data-testid="image-added"]')||{}).textContent||''`)); !strings.HasSuffix(s, " UTC") {
		t.Errorf("the new row's upload time is %q", s)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(nb)), chromedp.Click(chromedp.CSS(nb)))
	waitJS(t, ctx, `!document.querySelector('[data-testid="image-item"][data-id="`+added+`"]')`, 10*time.Second)
	var list []imageInfo
	ts.get(t, "/api/images", &list)
	if len(list) != 1 {
		t.Errorf("after deleting both: %+v", list)
	}
}
