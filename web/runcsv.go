package web

import (
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/zrviz/zrviz/core"
)

// writeCallsCSV answers GET /api/images/{id}/run?…&format=csv: each mode's calls as a table
// (core.WriteCallsCSV: mode,index,start,len), streamed, as a download named after the file.
func writeCallsCSV(w http.ResponseWriter, s *Server, file string, results []*core.Result) {
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": csvName(file)}))
	if err := core.WriteCallsCSV(w, results...); err != nil {
		// The status is sent: a client that went away is all this can be.
		s.log.Debug("run CSV", "file", file, "err", err)
	}
}

// csvName is the download's file name: the file's base name and "-calls.csv", in characters any
// file system takes ("bench64.bin" → "bench64.bin-calls.csv").
func csvName(file string) string {
	base := path.Base(file)
	if base == "/" || base == "." || base == "" {
		base = "run"
	}
	base = strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, base)
	return base + "-calls.csv"
}
