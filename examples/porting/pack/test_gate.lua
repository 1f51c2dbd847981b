-- test gate at Stop: the agent may not stop while the tests fail. attune
-- runs the test command itself ([harness.reads.exec.test]), not the model.
hook.round("end", function(b)
  local res = admit.read("exec/test")
  if res.code ~= 0 then
    notify("The tests do not pass yet: fix them before you stop.", "activating")
  end
end)
