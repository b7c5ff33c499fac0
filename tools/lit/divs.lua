--[[
divs.lua: lesson boxes from fenced divs.

  ::: {.details summary="Hint 1"}   -> <details><summary>Hint 1</summary>...
  ::: objectives / ::: keypoints     -> a titled box (class box + the name)
  ::: banner                         -> a status banner (role="status")

<details> is folded by default and opens without JavaScript.  The summary
attribute is read as Markdown, so it may hold `code`.
]]

local titles = { objectives = "Objectives", keypoints = "Key points" }

local function summary_inlines(text)
  -- Parse the summary attribute as Markdown inlines.
  local doc = pandoc.read(text, "markdown-raw_html-raw_tex")
  if #doc.blocks == 0 then return {} end
  return doc.blocks[1].content or {}
end

local function details(div)
  -- A .details div becomes <details><summary>...</summary>...</details>.
  local summary = div.attributes.summary
  if summary == nil or summary == "" then
    error("divs.lua: a .details div needs summary=\"...\" (id '" ..
          div.identifier .. "')", 0)
  end
  local classes = {}
  for _, c in ipairs(div.classes) do
    if c ~= "details" then table.insert(classes, c) end
  end
  local open = '<details'
  if div.identifier ~= "" then open = open .. ' id="' .. div.identifier .. '"' end
  if #classes > 0 then open = open .. ' class="' .. table.concat(classes, " ") .. '"' end
  local blocks = pandoc.List:new({ pandoc.RawBlock("html", open .. "><summary>"),
                                   pandoc.Plain(summary_inlines(summary)),
                                   pandoc.RawBlock("html", "</summary>") })
  blocks:extend(div.content)
  blocks:insert(pandoc.RawBlock("html", "</details>"))
  return blocks
end

local function box(div, kind)
  -- Objectives and key points: add the class "box" and a title if absent.
  div.classes:insert(1, "box")
  local first = div.content[1]
  if not (first and first.t == "Header") then
    div.content:insert(1, pandoc.Para({ pandoc.Strong({ pandoc.Str(titles[kind]) }) }))
    div.content[1] = pandoc.Div({ div.content[1] }, pandoc.Attr("", { "box-title" }))
  end
  return div
end

function Div(div)
  if div.classes:includes("details") then return details(div) end
  for kind, _ in pairs(titles) do
    if div.classes:includes(kind) then return box(div, kind) end
  end
  if div.classes:includes("banner") then
    div.attributes.role = "status"
    return div
  end
  return nil
end
