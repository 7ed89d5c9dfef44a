return require("ui/widget/fakewidget"):extend{ kind = "TextViewer" }
