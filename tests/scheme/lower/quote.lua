local name, names, mixed, nothing, q
name = "tasks"
names = {"a", "b", "c"}
mixed = {1, "two", true, "key", {"nested", "list"}, list()}
nothing = list()
q = "x"
define.reducer("offload", apply)
