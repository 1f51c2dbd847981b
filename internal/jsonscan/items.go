package jsonscan

// Items reads data as one JSON array and returns the text of each of its
// items (slices of data, white space around them left out), checking
// them. It gives up (false) on text that is not one valid JSON array; a
// null is no array either (encoding/json leaves a slice as it was for it).
func Items(data []byte) ([][]byte, bool) {
	d := decoder{Scanner: Scanner{Data: data}}
	d.WS()
	if !d.Eat('[') {
		return nil, false
	}
	d.depth = 1
	items := [][]byte{}
	d.WS()
	if d.Eat(']') {
		d.WS()
		return items, d.Pos == len(d.Data)
	}
	for {
		d.WS()
		start := d.Pos
		if _, ok := d.value(false); !ok {
			return nil, false
		}
		items = append(items, d.Data[start:d.Pos:d.Pos])
		if done, ok := d.Sep(']'); !ok {
			return nil, false
		} else if done {
			d.WS()
			return items, d.Pos == len(d.Data)
		}
	}
}
