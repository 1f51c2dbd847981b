package engine

// ScriptNames are the Lua names of the engine's script functions and
// register forms ("guard.tool", "notify", "invoke"), for a checker that
// finds calls of names that are not defined (attune check).
func ScriptNames() []string {
	out := make([]string, 0, len(forms)+1)
	for _, f := range forms {
		out = append(out, f.LuaName())
	}
	return append(out, invokeFunc.LuaName())
}
