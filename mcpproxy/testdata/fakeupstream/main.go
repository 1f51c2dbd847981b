// fakeupstream is an MCP server over stdio for mcpproxy's tests: it lists
// the tools named on its command line, answers tools/call with the text
// of the params it received, and appends each line it reads to the file
// $FAKEUPSTREAM_LOG.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	log, _ := os.OpenFile(os.Getenv("FAKEUPSTREAM_LOG"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	tools := []map[string]any{}
	for _, name := range os.Args[1:] {
		tools = append(tools, map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}})
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 16<<20)
	out := bufio.NewWriter(os.Stdout)
	for sc.Scan() {
		line := sc.Bytes()
		if log != nil {
			fmt.Fprintf(log, "%s\n", line)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil {
			continue
		}
		var result any
		switch m.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "fake", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": tools}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": string(m.Params)}}}
		default:
			result = map[string]any{}
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
		out.Write(append(b, '\n'))
		out.Flush()
	}
}
