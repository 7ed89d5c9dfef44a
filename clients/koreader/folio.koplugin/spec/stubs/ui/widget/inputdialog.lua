-- InputDialog: a test types into it with `dialog.typed = "..."`.
local InputDialog = require("ui/widget/fakewidget"):extend{ kind = "InputDialog" }
function InputDialog:getInputText() return self.typed or self.input or "" end
function InputDialog:onShowKeyboard() self.keyboard = true end
return InputDialog
