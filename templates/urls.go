package templates

import (
	"net/url"
	"strconv"
)

// fileURL is the block-map page of path in image id.
func fileURL(id, path string) string {
	return "/images/" + url.PathEscape(id) + "/file?path=" + url.QueryEscape(path)
}

// RunURL is the player permalink for a run; step < 0 leaves it out.
func RunURL(id, path string, offset, length int64, mode string, step int64) string {
	q := url.Values{}
	q.Set("path", path)
	q.Set("offset", strconv.FormatInt(offset, 10))
	q.Set("length", strconv.FormatInt(length, 10))
	q.Set("mode", mode)
	if step >= 0 {
		q.Set("step", strconv.FormatInt(step, 10))
	}
	return "/images/" + url.PathEscape(id) + "/run?" + q.Encode()
}

// depthClass indents a tree entry by its depth. It is a class, not a style
// attribute, because the CSP (style-src 'self') refuses inline styles.
func depthClass(depth int) string {
	return "depth-" + strconv.Itoa(min(depth, 12))
}

func typeIcon(t string) string {
	switch t {
	case "dir":
		return "▾"
	case "symlink":
		return "↪"
	case "file":
		return "▪"
	}
	return "?"
}
