package reliability

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/coder/websocket"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/web"
)

// TestLoopbackByDefault: the default address is loopback, and serve warns
// when told to bind elsewhere.
func TestLoopbackByDefault(t *testing.T) {
	// In parallel with the others of its kind: it waits on a server more than it computes, and
	// measures nothing process-wide that they would disturb.
	t.Parallel()
	host, _, err := net.SplitHostPort(web.DefaultAddr)
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		t.Errorf("web.DefaultAddr %q is not a loopback address", web.DefaultAddr)
	}
	bin := buildZrviz(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "-addr", "0.0.0.0:0", "-data-dir", t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "listening") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond) // the poll's interval: the "listening" line is the state waited for
	}
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	if !strings.Contains(out.String(), "beyond loopback") {
		t.Errorf("no warning when binding 0.0.0.0:\n%s", out.String())
	}
	// help text names the default.
	help, _ := exec.Command(bin, "serve", "-h").CombinedOutput()
	if !strings.Contains(string(help), web.DefaultAddr) {
		t.Errorf("serve -h does not show the loopback default %s:\n%s", web.DefaultAddr, help)
	}
}

// TestRequestLimits: every route refuses oversized requests without
// reading them: huge headers and URLs, bodies on GET routes, uploads over
// the limit (declared or streamed), websocket messages over 4 KiB.
func TestRequestLimits(t *testing.T) {
	// In parallel with the others of its kind: it waits on a server more than it computes, and
	// measures nothing process-wide that they would disturb.
	t.Parallel()
	const maxUpload = 16 << 20
	ls := startServer(t, web.Config{MaxUpload: maxUpload, MaxExpanded: maxUpload})
	routes := []string{"/", "/images/demo", "/images/demo/file?path=/cases/tiny.txt", "/images/demo/run?path=/cases/tiny.txt",
		"/api/images", "/api/images/demo", "/api/images/demo/map?path=/cases/tiny.txt", "/api/images/demo/dnodes?path=/cases/tiny.txt",
		"/api/images/demo/run?path=/cases/tiny.txt", "/api/images/demo/segments", "/api/images/demo/segments/3",
		"/api/uploads/x", "/static/", "/ws/run?image=demo&path=/cases/tiny.txt"}
	for _, r := range routes {
		// 2 MiB of query string: over the header limit.
		req, _ := http.NewRequest(http.MethodGet, ls.url+r+"&pad="+strings.Repeat("a", 2<<20), nil)
		if !strings.Contains(r, "?") {
			req, _ = http.NewRequest(http.MethodGet, ls.url+r+"?pad="+strings.Repeat("a", 2<<20), nil)
		}
		if res, err := http.DefaultClient.Do(req); err == nil {
			if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge && res.StatusCode != http.StatusRequestURITooLong {
				t.Errorf("GET %s with a 2 MiB URL: %d", r, res.StatusCode)
			}
			res.Body.Close()
		}
		// A 64 MiB body on a route that takes none: answered without
		// reading it all (the client stops sending when the answer
		// arrives or the server closes).
		body := &countingBody{n: 64 << 20}
		req, _ = http.NewRequest(http.MethodPost, ls.url+r, body)
		req.ContentLength = body.n
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode < 400 {
				t.Errorf("POST %s with 64 MiB: %d", r, res.StatusCode)
			}
		}
		if body.read > 8<<20 {
			t.Errorf("POST %s: the server read %d bytes of a body it does not take", r, body.read)
		}
	}
	// Uploads: declared over the limit → 413 before reading; streamed
	// (chunked) over the limit → 413 once the limit is passed.
	body := &countingBody{n: maxUpload + 1}
	req, _ := http.NewRequest(http.MethodPost, ls.url+"/api/images", body)
	req.ContentLength = body.n
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("declared oversize upload: %v %v", res, err)
	} else {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(b), fmt.Sprint(maxUpload)) && !strings.Contains(string(b), "16") {
			t.Errorf("413 body does not name the limit: %s", b)
		}
	}
	// The body starts as a real F2FS image (the first 8 KiB of one, its
	// superblocks): imgio checks them as they stream in and refuses bytes
	// that are not F2FS after 8 KiB, with 400, before any limit is reached.
	img, err := os.ReadFile(mkfsImage(t, t.TempDir(), 64, ""))
	if err != nil {
		t.Fatal(err)
	}
	body = &countingBody{n: 4 * maxUpload}
	req, _ = http.NewRequest(http.MethodPost, ls.url+"/api/images", io.MultiReader(bytes.NewReader(img[:8192]), body)) // no length: chunked
	if res, err := http.DefaultClient.Do(req); err == nil {
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("streamed oversize upload: %d", res.StatusCode)
		}
		res.Body.Close()
	}
	if body.read > maxUpload+(8<<20) {
		t.Errorf("streamed oversize upload: %d bytes read, limit %d", body.read, maxUpload)
	}
	// A compressed bomb under the upload limit but expanding past the
	// expansion limit (web.Config.MaxExpanded).
	t.Run("upload_expansion_bounded", func(t *testing.T) {
		code, msg, err := postBytes(ls.url, "/api/images?name=bomb.gz", bomb(t, imgio.FormatGzip, 4)) // 64 MiB out
		if err != nil || code != http.StatusRequestEntityTooLarge {
			t.Errorf("gzip bomb (64 MiB out, upload limit 16 MiB): %d %s %v; want 413 naming the limit", code, msg, err)
		}
		n, sz := dirBytes(t, ls.dataDir)
		t.Logf("after the bomb: %d files, %d bytes in the data dir", n, sz)
		if sz > maxUpload {
			t.Errorf("the bomb filled %d bytes of the data dir, limit %d", sz, maxUpload)
		}
	})
	// Websocket: a 1 MiB control message is refused; the server goes on.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, _, err := dialViewer(ctx, ls.wsURL(url.Values{"image": {web.DemoID}, "path": {"/cases/tiny.txt"}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	v.read(ctx)
	v.c.Write(ctx, websocket.MessageText, bytes.Repeat([]byte(" "), 1<<20))
	var rerr error
	for rerr == nil {
		var m *wsMsg
		m, rerr = v.read(ctx)
		if m != nil && m.Type == "error" {
			break
		}
	}
	t.Logf("1 MiB control: %v", rerr)
	if rerr == nil || ctx.Err() != nil {
		t.Errorf("1 MiB control message: no error and no close")
	}
	if ids := ls.imageIDs(t); len(ids) != 1 {
		t.Errorf("images after the refusals: %v", ids)
	}
}

// countingBody is n bytes of 'x' that counts what was read.
type countingBody struct{ n, read int64 }

func (c *countingBody) Read(p []byte) (int, error) {
	if c.read >= c.n {
		return 0, io.EOF
	}
	k := min(int64(len(p)), c.n-c.read)
	for i := range p[:k] {
		p[i] = 'x'
	}
	c.read += k
	return int(k), nil
}

// TestWebsocketOrigin: a foreign Origin is refused with 403; the page's own
// origin is accepted.
func TestWebsocketOrigin(t *testing.T) {
	ls := startServer(t, web.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u := ls.wsURL(url.Values{"image": {web.DemoID}, "path": {"/cases/tiny.txt"}})
	for _, origin := range []string{"http://evil.example", "null", "http://127.0.0.1.evil.example", "http://localhost:1"} {
		_, res, err := dialViewer(ctx, u, http.Header{"Origin": {origin}})
		if err == nil || res == nil || res.StatusCode != http.StatusForbidden {
			st := 0
			if res != nil {
				st = res.StatusCode
			}
			t.Errorf("Origin %s: err %v status %d, want 403", origin, err, st)
		}
	}
	v, _, err := dialViewer(ctx, u, http.Header{"Origin": {ls.url}})
	if err != nil {
		t.Fatalf("same origin refused: %v", err)
	}
	v.c.CloseNow()
}

// TestImagePathsStayInside: an image whose directory holds a file named
// "../../etc/x" (patched into a real dentry) is uploaded and browsed
// through every route; nothing appears on the host, the data dir holds
// only the expanded image, and host files are never served.
func TestImagePathsStayInside(t *testing.T) {
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "d"), 0o755)
	os.WriteFile(filepath.Join(src, "d", "zz-escape-x"), bytes.Repeat([]byte("e"), 10000), 0o644) // 11 bytes, as "../../etc/x"
	os.WriteFile(filepath.Join(src, "passwd"), []byte("inside\n"), 0o644)
	img := mkfsImage(t, t.TempDir(), 64, src)
	data, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	k := bytes.Index(data, []byte("zz-escape-x"))
	if k < 0 {
		t.Fatal("name not found in the image")
	}
	copy(data[k:], "../../etc/x")
	escaped := filepath.Join(t.TempDir(), "evil.img")
	os.WriteFile(escaped, data, 0o644)

	cwd, _ := os.Getwd()
	ls := startServer(t, web.Config{})
	code, body, err := upload(context.Background(), ls.url, escaped)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("upload of an image with ../../etc/x: %d %.200s", code, body)
	id := ""
	for _, x := range ls.imageIDs(t) {
		if x != web.DemoID {
			id = x
		}
	}
	if id != "" {
		for _, p := range []string{"/../../etc/x", "../../etc/x", "/d/../../etc/x", "/../../../../etc/passwd", "/passwd"} {
			q := url.QueryEscape(p)
			for _, r := range []string{"/api/images/" + id + "/map?path=" + q, "/api/images/" + id + "/run?path=" + q,
				"/api/images/" + id + "/dnodes?path=" + q, "/images/" + id + "/file?path=" + q, "/images/" + id + "/run?path=" + q} {
				res, err := http.Get(ls.url + r)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if bytes.Contains(b, []byte("root:x:0:0")) {
					t.Errorf("GET %s served the host's /etc/passwd", r)
				}
			}
		}
		res, _ := http.Get(ls.url + "/api/images/" + id)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		t.Logf("inspect: %d, names escaped: %v", res.StatusCode, bytes.Contains(b, []byte("etc/x")))
	}
	for _, p := range []string{"/etc/x", filepath.Join(ls.dataDir, "../../etc/x"), filepath.Join(cwd, "../../etc/x")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists on the host", p)
		}
	}
	// The data dir holds the stored upload (its image and meta.json) and nothing else.
	for _, f := range tree(ls.dataDir) {
		if f != "uploads/" && f != "tmp/" && !(strings.HasPrefix(f, "uploads/"+id) && id != "") {
			t.Errorf("the data dir holds %s, want only the stored upload %s", f, id)
		}
	}
}

// TestNoDataDirListing: no route lists the data dir or serves its files.
func TestNoDataDirListing(t *testing.T) {
	ls := startServer(t, web.Config{})
	small := mkfsImage(t, t.TempDir(), 64, "")
	if code, body, err := upload(context.Background(), ls.url, small); err != nil || code != http.StatusCreated {
		t.Fatalf("upload: %d %s %v", code, body, err)
	}
	// The data dir's own path and its names (the upload's id is its public
	// name and may appear; the files under it and the server's temp files
	// may not).
	names := []string{ls.dataDir}
	for _, f := range tree(ls.dataDir) {
		if base := filepath.Base(f); strings.HasPrefix(base, ".") || strings.HasPrefix(base, "zrviz-") || base == "meta.json" {
			names = append(names, base)
		}
	}
	if len(tree(ls.dataDir)) == 0 {
		t.Fatal("the upload left nothing in the data dir to look for")
	}
	base := filepath.Base(ls.dataDir)
	for _, r := range []string{"/data/", "/data", "/uploads/", "/static/", "/static/../", "/static/..%2f", "/api/", "/api/images/",
		"/" + base + "/", "/static/meta.json", "/meta.json", "/tmp/", "/api/images/meta.json", "/..%2f..%2f" + base} {
		res, err := http.Get(ls.url + r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
		for _, n := range names {
			// A 404 may echo the requested path; only a name the client
			// did not send would be a leak.
			if !strings.Contains(r, n) && bytes.Contains(b, []byte(n)) {
				t.Errorf("GET %s (%d) shows the data dir file %s", r, res.StatusCode, n)
			}
		}
		if strings.Contains(string(b), "<pre>\n<a href=") {
			t.Logf("GET %s (%d) is a directory listing (of embedded assets):\n%.300s", r, res.StatusCode, b)
		}
	}
}

// TestSecurityHeaders: every page has a CSP allowing only self and no
// inline script: no <script> without src (JSON data blocks aside), no
// inline event handlers.
func TestSecurityHeaders(t *testing.T) {
	ls := startServer(t, web.Config{})
	for _, p := range []string{"/", "/images/demo", "/images/demo/file?path=/seed/bench64.bin",
		"/images/demo/run?path=/seed/bench64.bin", "/no/such/page", "/api/images"} {
		res, err := http.Get(ls.url + p)
		if err != nil {
			t.Fatal(err)
		}
		csp := res.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") ||
			!strings.Contains(csp, "script-src 'self'") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no X-Content-Type-Options: nosniff", p)
		}
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			res.Body.Close()
			continue
		}
		doc, err := goquery.NewDocumentFromReader(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		doc.Find("script").Each(func(_ int, s *goquery.Selection) {
			src, hasSrc := s.Attr("src")
			typ, _ := s.Attr("type")
			if !hasSrc && typ != "application/json" {
				t.Errorf("%s: inline script %.100q", p, s.Text())
			}
			if hasSrc && (strings.HasPrefix(src, "http:") || strings.HasPrefix(src, "https:") || strings.HasPrefix(src, "//")) {
				t.Errorf("%s: script from elsewhere: %s", p, src)
			}
		})
		doc.Find("*").Each(func(_ int, s *goquery.Selection) {
			for _, a := range s.Nodes[0].Attr {
				if strings.HasPrefix(strings.ToLower(a.Key), "on") {
					t.Errorf("%s: inline handler %s=%q on <%s>", p, a.Key, a.Val, s.Nodes[0].Data)
				}
				if strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "javascript:") {
					t.Errorf("%s: javascript: URL on <%s>", p, s.Nodes[0].Data)
				}
			}
		})
	}
}

// TestWebsocketGarbage: malformed controls get non-fatal error messages;
// past 100 of them the server closes with 1008; other viewers are not
// affected.
func TestWebsocketGarbage(t *testing.T) {
	// In parallel with the others of its kind: it waits on a server more than it computes, and
	// measures nothing process-wide that they would disturb.
	t.Parallel()
	ls := startServer(t, web.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u := ls.wsURL(url.Values{"image": {web.DemoID}, "path": {"/cases/contiguous.bin"}})
	v, _, err := dialViewer(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.c.CloseNow()
	if m, err := v.read(ctx); err != nil || m.Type != "hello" {
		t.Fatalf("hello: %v %v", m, err)
	}
	garbage := []string{`{`, `[]`, `{"type":"seek","step":-1}`, `{"type":"speed","stepsPerSecond":1e400}`,
		`{"type":"jump"}`, `{"type":"mode","mode":"../../etc"}`, "\x00\xff", `{"type":"step","n":99999999999999999999}`}
	errs := 0
	var closeErr error
	for i := 0; i < 150 && closeErr == nil; i++ {
		typ := websocket.MessageText
		if i%10 == 9 {
			typ = websocket.MessageBinary
		}
		if err := v.c.Write(ctx, typ, []byte(garbage[i%len(garbage)])); err != nil {
			closeErr = err
			break
		}
		for {
			_, b, err := v.c.Read(ctx)
			if err != nil {
				closeErr = err
				break
			}
			if bytes.Contains(b, []byte(`"type":"error"`)) {
				errs++
				break
			}
		}
	}
	t.Logf("%d error messages, then %v", errs, closeErr)
	// Error replies are queued, never replaced: the 100th bad control gets its reply before the
	// close (issue 13 item 7).
	if websocket.CloseStatus(closeErr) != websocket.StatusPolicyViolation || errs != 100 {
		t.Errorf("after %d error messages: %v, want one per bad control, then a 1008 close after the 100th", errs, closeErr)
	}
	w, _, err := dialViewer(ctx, u, nil)
	if err != nil {
		t.Fatalf("another viewer after the garbage: %v", err)
	}
	defer w.c.CloseNow()
	if got, err := w.playToEnd(ctx); err != nil || got["batched"] != 2 || got["per-block"] != 1024 {
		t.Errorf("another viewer: %v %v, want 1024 per-block calls and 2 batched (one per dnode chunk)", got, err)
	}
}

// TestCrossSiteAndRebinding: issue 13 item 5 as an attacker's page would do it, against a live
// server. A cross-site form POST (text/plain, no preflight) of a real image is refused with 403 and
// stores nothing; a DNS-rebinding page (its own name resolving to 127.0.0.1) gets 421 on every route,
// reads included; the user's own page and programs without Origin are served.
func TestCrossSiteAndRebinding(t *testing.T) {
	// In parallel with the others of its kind: it waits on a server more than it computes, and
	// measures nothing process-wide that they would disturb.
	t.Parallel()
	ls := startServer(t, web.Config{})
	img, err := os.ReadFile(mkfsImage(t, t.TempDir(), 64, ""))
	if err != nil {
		t.Fatal(err)
	}
	port := ls.url[strings.LastIndexByte(ls.url, ':')+1:]
	send := func(method, path, host string, hdr map[string]string, body []byte) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, ls.url+path, bytes.NewReader(body))
		if host != "" {
			req.Host = host
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	evil := map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain", "Sec-Fetch-Site": "cross-site"}
	if code, body := send(http.MethodPost, "/api/images?name=x.img", "", evil, img); code != http.StatusForbidden || !strings.HasPrefix(body, `{"error":`) {
		t.Errorf("cross-site text/plain upload: %d %.100s, want 403 with the JSON error", code, body)
	}
	if code, _ := send(http.MethodDelete, "/api/images/demo", "", evil, nil); code != http.StatusForbidden {
		t.Errorf("cross-site DELETE: %d, want 403", code)
	}
	for _, p := range []string{"/", "/api/images", "/api/images/demo", "/images/demo", "/api/images/demo/map?path=/cases/tiny.txt"} {
		if code, body := send(http.MethodGet, p, "evil.example:"+port, nil, nil); code != http.StatusMisdirectedRequest || !strings.HasPrefix(body, `{"error":`) {
			t.Errorf("rebinding GET %s: %d %.100s, want 421 with the JSON error", p, code, body)
		}
	}
	rebound := map[string]string{"Origin": "http://evil.example:" + port}
	if code, _ := send(http.MethodPost, "/api/images?name=x.img", "evil.example:"+port, rebound, img); code != http.StatusMisdirectedRequest {
		t.Errorf("rebinding upload: %d, want 421", code)
	}
	if ids := ls.imageIDs(t); len(ids) != 1 {
		t.Errorf("stored after the attacks: %v, want only the demo", ids)
	}
	// The user's page, and curl.
	own := map[string]string{"Origin": ls.url, "Sec-Fetch-Site": "same-origin", "Content-Type": "application/octet-stream"}
	if code, body := send(http.MethodPost, "/api/images?name=mine.img", "", own, img); code != http.StatusCreated {
		t.Errorf("same-origin upload: %d %.100s", code, body)
	}
	if code, body := send(http.MethodPost, "/api/images?name=mine.img.gz", "", nil, basicGz(t)); code != http.StatusCreated {
		t.Errorf("upload without Origin (curl): %d %.100s", code, body)
	}
}

// basicGz is the gzip fixture basic.img.gz: a valid upload other than the raw image above.
func basicGz(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../imgio/testdata/basic.img.gz")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
