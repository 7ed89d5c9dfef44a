-- Records the actions plugins register for gestures.
local Dispatcher = { actions = {} }
function Dispatcher:registerAction(name, spec) self.actions[name] = spec end
return Dispatcher
