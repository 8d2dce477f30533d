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

// seeTerm is the name of a related entry.
func seeTerm(slug string) string {
	if e, ok := glossary.Lookup(slug); ok {
		return e.Term
	}
	return slug
}
