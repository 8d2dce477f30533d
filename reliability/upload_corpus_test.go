package reliability

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/zrviz/zrviz/web"
)

// TestCorruptUploads sends a seeded sample of corrupt images (zstd
// compressed, so the zero blocks cost nothing) through POST /api/images.
// Each is stored or refused with 400 and a JSON error; what is stored is
// then browsed through the API, where nothing may answer 500; and the
// server keeps serving throughout.
func TestCorruptUploads(t *testing.T) {
	src := t.TempDir()
	populate(t, src)
	img := mkfsImage(t, t.TempDir(), 128, src)
	data, err := mapFile(img)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBase("upload", data)
	if err != nil {
		t.Fatal(err)
	}
	n := 20
	if testing.Short() {
		n = 5 // the fast tier: a smaller seeded sample of the same cases
	}
	if os.Getenv("ZRVIZ_SOAK") != "" {
		n = 600
	}
	cases := sample(Generate(b, corpusSeed(t), 100), n, corpusSeed(t))
	ls := startServer(t, web.Config{})
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	counts := map[int]int{}
	// One buffer for every case's image and one for its upload: a fresh 128 MiB a case cost
	// more CPU (page faults, clearing) than the uploads.
	var buf, z []byte
	for _, c := range cases {
		if int64(cap(buf)) < c.Size {
			buf = make([]byte, c.Size) // a case may grow or cut the image
		}
		n, _ := c.Overlay(b.Data).ReadAt(buf[:c.Size], 0)
		z = enc.EncodeAll(buf[:n], z[:0])
		code, body, err := postBytes(ls.url, "/api/images?name=corrupt.img.zst", z)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		counts[code]++
		var e struct {
			Error string `json:"error"`
			ID    string `json:"id"`
		}
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Errorf("%s: %d with a body that is not JSON: %.200s", c.Name, code, body)
			continue
		}
		switch code {
		case http.StatusCreated, http.StatusOK:
			browse(t, ls, c.Name, e.ID)
		case http.StatusBadRequest:
			if e.Error == "" {
				t.Errorf("%s: 400 without an error message", c.Name)
			}
		default:
			t.Errorf("%s: upload answered %d %s", c.Name, code, body)
		}
	}
	t.Logf("%d corrupt uploads: statuses %v", len(cases), counts)
	if res, err := http.Get(ls.url + "/api/images"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("server stopped serving: %v %v", res, err)
	}
}

// browse requests every API view of a stored image; 500 is a failure.
func browse(t *testing.T, ls *liveServer, name, id string) {
	t.Helper()
	paths := []string{"/api/images/" + id, "/api/images/" + id + "/segments", "/images/" + id}
	res, err := http.Get(ls.url + "/api/images/" + id)
	if err == nil {
		var body struct {
			Files []struct {
				Path string `json:"path"`
				Type string `json:"type"`
			} `json:"files"`
		}
		json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		for i, f := range body.Files {
			if i >= 8 {
				break
			}
			q := url.QueryEscape(f.Path)
			paths = append(paths, "/api/images/"+id+"/map?path="+q, "/api/images/"+id+"/dnodes?path="+q,
				"/api/images/"+id+"/run?path="+q, "/images/"+id+"/file?path="+q)
		}
	}
	for _, p := range paths {
		res, err := http.Get(ls.url + p)
		if err != nil {
			t.Fatalf("%s: GET %s: %v", name, p, err)
		}
		b, _ := io.ReadAll(io.LimitReader(res.Body, 4<<20))
		res.Body.Close()
		if res.StatusCode >= 500 {
			t.Errorf("%s: GET %s: %d %.200s", name, p, res.StatusCode, b)
		}
		if strings.HasPrefix(p, "/api/") && !json.Valid(bytes.TrimSpace(b)) && len(b) < 4<<20 {
			t.Errorf("%s: GET %s: %d, not JSON: %.200s", name, p, res.StatusCode, b)
		}
	}
}
