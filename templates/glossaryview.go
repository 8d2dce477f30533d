package templates

import "github.com/zrviz/zrviz/glossary"

// GlossaryGroup is one heading of the glossary page and its entries.
type GlossaryGroup struct {
	Name    string
	Entries []glossary.Entry
}

// GlossaryPage is the data of the /glossary page.
type GlossaryPage struct {
	Layout
	Groups []GlossaryGroup
}

// GlossaryGroups sorts the glossary's entries under their groups, in page order.
func GlossaryGroups() []GlossaryGroup {
	all := glossary.All()
	var out []GlossaryGroup
	for _, g := range glossary.Groups() {
		gg := GlossaryGroup{Name: g}
		for _, e := range all {
			if e.Group == g {
				gg.Entries = append(gg.Entries, e)
			}
		}
		out = append(out, gg)
	}
	return out
}

// termTitle is the plain-text hover title of a term (for elements the player's popovers also
// explain, and for pages without the popover script).
func termTitle(slug string) string {
	e, ok := glossary.Lookup(slug)
	if !ok {
		return ""
	}
	return e.Term + ": " + e.Text
}

// seeTerm is the name of a related entry.
func seeTerm(slug string) string {
	if e, ok := glossary.Lookup(slug); ok {
		return e.Term
	}
	return slug
}
