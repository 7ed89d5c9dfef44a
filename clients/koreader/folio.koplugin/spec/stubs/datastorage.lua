local DataStorage = {}
function DataStorage:getSettingsDir() return "/koreader/settings" end
function DataStorage:getDataDir() return "/koreader" end
return DataStorage
