package web

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestHostCheck: a request whose Host is not a name the server listens as gets 421 with the JSON
// error (DNS rebinding); loopback names and IP addresses on the server's port, the --addr host and
// --allowed-host names pass.
func TestHostCheck(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{Addr: "zrviz.lan:8080", AllowedHosts: []string{"Proxy.Example", "other.example:8443"}})
	port := ts.ts.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndexByte(port, ':')+1:]
	tests := []struct {
		host string
		code int
	}{
		{"127.0.0.1:" + port, 200},
		{"localhost:" + port, 200},
		{"LOCALHOST:" + port, 200},
		{"[::1]:" + port, 200},
		{"10.1.2.3:" + port, 200}, // an address: never a rebinding
		{"zrviz.lan:" + port, 200},
		{"zrviz.lan", 200},
		{"proxy.example", 200},
		{"proxy.example:443", 200},
		{"other.example:8443", 200},
		{"other.example", 421},
		{"evil.example:" + port, 421},
		{"evil.example", 421},
		{"localhost:1", 421},
		{"127.0.0.1:1", 421},
		{"localhost.:" + port, 421},
		{"127.0.0.1.nip.io:" + port, 421},
		{"zrviz.lan.evil.example", 421},
	}
	for _, tt := range tests {
		for _, p := range []string{"/api/images", "/", "/images/demo", "/ws/run?image=demo&path=/cases/tiny.txt"} {
			req, _ := http.NewRequest(http.MethodGet, ts.ts.URL+p, nil)
			req.Host = tt.host
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			code := res.StatusCode
			if tt.code == 200 && strings.HasPrefix(p, "/ws/") {
				// A plain GET on the websocket: whatever the upgrade check says, not 421.
				if code == http.StatusMisdirectedRequest {
					t.Errorf("Host %q %s: 421", tt.host, p)
				}
				continue
			}
			if code != tt.code {
				t.Errorf("Host %q %s: %d, want %d (%.100s)", tt.host, p, code, tt.code, b)
			}
			if code == http.StatusMisdirectedRequest && !bytes.Contains(b, []byte(`{"error":"misdirected request`)) {
				t.Errorf("Host %q: 421 body %s, want the JSON error", tt.host, b)
			}
		}
	}
}

// TestOriginCheck: state-changing requests from another origin are refused with 403 (and store
// nothing); same-origin ones and those without Origin or Sec-Fetch-Site (curl, the CLI) pass.
func TestOriginCheck(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	tests := []struct {
		name    string
		headers map[string]string
		code    int
	}{
		// The cross-site form a hostile page can send without a preflight.
		{"cross-site text/plain", map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain", "Sec-Fetch-Site": "cross-site"}, 403},
		{"cross-site Origin only", map[string]string{"Origin": "http://evil.example"}, 403},
		{"opaque origin", map[string]string{"Origin": "null"}, 403},
		{"same host other port", map[string]string{"Origin": "http://127.0.0.1:1"}, 403},
		{"lookalike", map[string]string{"Origin": "http://127.0.0.1.evil.example"}, 403},
		{"Sec-Fetch-Site cross-site", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"Sec-Fetch-Site same-site", map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{"same origin", map[string]string{"Origin": ts.ts.URL, "Sec-Fetch-Site": "same-origin"}, 201},
		{"Sec-Fetch-Site same-origin", map[string]string{"Sec-Fetch-Site": "same-origin"}, 201},
		{"no Origin (curl)", nil, 201},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := fixtureVariant(t, "basic", "origin"+string(rune('a'+i)))
			req, _ := http.NewRequest(http.MethodPost, ts.ts.URL+"/api/images?name=x.img", bytes.NewReader(body))
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var e errorBody
			code := decode(t, res, &e)
			res.Body.Close()
			if code != tt.code {
				t.Fatalf("POST: %d %q, want %d", code, e.Error, tt.code)
			}
		})
	}
	// Only the three accepted uploads are stored.
	if ids := ts.ids(t); len(ids) != 4 {
		t.Errorf("stored: %v, want the demo and 3 uploads", ids)
	}
}

// TestHeadAndAllow: HEAD answers wherever GET does, with GET's headers and no body; a 405 carries
// Allow with the methods the path takes.
func TestHeadAndAllow(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	js := ts.assets.Hashed("js/images.js")
	for _, p := range []string{"/", "/images/demo", "/images/demo/file?path=/cases/tiny.txt", "/api/images", "/api/images/demo",
		"/api/images/demo/segments", "/api/images/demo/map?path=/cases/tiny.txt", js} {
		get, err := http.Get(ts.ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, get.Body)
		get.Body.Close()
		head, err := http.Head(ts.ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(head.Body)
		head.Body.Close()
		if head.StatusCode != get.StatusCode || head.StatusCode != 200 || len(b) != 0 ||
			head.Header.Get("Content-Type") != get.Header.Get("Content-Type") {
			t.Errorf("HEAD %s: %d %q, %d bytes; GET: %d %q", p, head.StatusCode, head.Header.Get("Content-Type"), len(b),
				get.StatusCode, get.Header.Get("Content-Type"))
		}
	}
	tests := []struct{ method, path, allow string }{
		{http.MethodPut, "/api/images/demo", "GET, HEAD, DELETE"},
		{http.MethodPost, "/api/images/demo", "GET, HEAD, DELETE"},
		{http.MethodPost, "/api/images/demo/map", "GET, HEAD"},
		{http.MethodDelete, "/api/images", "GET, HEAD, POST"},
		{http.MethodPatch, "/", "GET, HEAD"},
		{http.MethodPost, "/images/demo/run", "GET, HEAD"},
		{http.MethodDelete, "/api/uploads/x", "GET, HEAD"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, ts.ts.URL+tt.path, strings.NewReader("{}"))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e errorBody
		code := decode(t, res, &e)
		res.Body.Close()
		if code != http.StatusMethodNotAllowed || res.Header.Get("Allow") != tt.allow || e.Error == "" {
			t.Errorf("%s %s: %d Allow %q %q; want 405 Allow %q", tt.method, tt.path, code, res.Header.Get("Allow"), e.Error, tt.allow)
		}
	}
}

// TestSafeName: upload names become safe labels, every class of input.
func TestSafeName(t *testing.T) {
	long := strings.Repeat("a", 300) + ".img"
	longUTF8 := strings.Repeat("é", 200) + ".img.zst"
	tests := []struct{ in, want string }{
		{"mine.img", "mine.img"},
		{"<script>alert(1)</script>.img", "script_alert(1)_script_.img"},
		{`"><img src=x onerror=alert(1)>.img`, "img src=x onerror=alert(1)_.img"},
		{"..", "upload.img"},
		{".", "upload.img"},
		{"...", "upload.img"},
		{"", "upload.img"},
		{"/", "upload.img"},
		{"../../etc/passwd", "etc_passwd"},
		{"a/b.img", "a_b.img"},
		{".hidden.img", "hidden.img"},
		{"tab\there\x00nul\x1b[31m.img", "tab_here_nul_[31m.img"},
		{"\u202egnp.exe", "gnp.exe"}, // right-to-left override
		{"caf\xe9.img", "caf_.img"},  // invalid UTF-8
		{"données 2024 (v2).img", "données 2024 (v2).img"},
		{"userdata.simg", "userdata.simg"},
		{long, strings.Repeat("a", 251) + ".img"},
		{longUTF8, strings.Repeat("é", 125) + ".zst"},
	}
	for _, tt := range tests {
		got := safeName(tt.in)
		if got != tt.want {
			t.Errorf("safeName(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if len(got) > maxNameBytes {
			t.Errorf("safeName(%q) is %d bytes", tt.in, len(got))
		}
	}
	// Through the API: the query name, and a multipart file name that is a Windows path.
	q := url.Values{"name": {"<script>alert(1)</script>.img"}}
	r, _ := http.NewRequest(http.MethodPost, "/api/images?"+q.Encode(), nil)
	if got := uploadName("", false, r); got != "script_alert(1)_script_.img" {
		t.Errorf("query name: %q", got)
	}
	if got := uploadName(`C:\Users\me\<b>x</b>.img`, true, r); got != "b_x_b_.img" {
		t.Errorf("multipart Windows path: %q", got)
	}
}
