--[[
divs.lua: lesson boxes from fenced divs.
  ::: {.details summary="Hint 1"}   -> <details><summary>Hint 1</summary>...
  ::: objectives / ::: keypoints     -> a titled box (class box + the name)
  ::: banner                         -> a status banner (role="status"),
                                        none when it is empty
<details> is folded by default and opens without JavaScript; the summary
attribute is read as Markdown, so it may hold `code`.
A fence pandoc read as text (a "::: {" line with no blank line before it)
is an error that quotes it: it would show on the page as it was typed.
]]

local titles = { objectives = "Objectives", keypoints = "Key points" }

local function details(div)
  -- A .details div becomes <details><summary>...</summary>...</details>.
  local summary = div.attributes.summary
  if summary == nil or summary == "" then
    error("divs.lua: a .details div needs summary=\"...\" (id '" ..
          div.identifier .. "')", 0)
  end
  local classes = div.classes:filter(function(c) return c ~= "details" end)
  local open = '<details' .. (div.identifier ~= "" and
    ' id="' .. div.identifier .. '"' or "") .. (#classes > 0 and
    ' class="' .. table.concat(classes, " ") .. '"' or "")
  local parsed = pandoc.read(summary, "markdown-raw_html-raw_tex").blocks
  local blocks = pandoc.List({ pandoc.RawBlock("html", open .. "><summary>"),
    pandoc.Plain(#parsed > 0 and parsed[1].content or {}),
    pandoc.RawBlock("html", "</summary>") })
  return blocks .. div.content .. { pandoc.RawBlock("html", "</details>") }
end

function Div(div)
  if div.classes:includes("details") then return details(div) end
  for kind, title in pairs(titles) do
    if div.classes:includes(kind) then
      -- A titled box: the class "box", and a title unless it has a header.
      div.classes:insert(1, "box")
      if not (div.content[1] and div.content[1].t == "Header") then
        div.content:insert(1, pandoc.Div({ pandoc.Para({ pandoc.Strong({
          pandoc.Str(title) }) }) }, pandoc.Attr("", { "box-title" })))
      end
      return div
    end
  end
  if div.classes:includes("banner") then
    if #div.content == 0 then return {} end  -- every .when in it is false
    div.attributes.role = "status"
    return div
  end
end

-- A paragraph that holds a fence's opening: the div pandoc did not see.
local function unread_fence(el)
  local text = pandoc.utils.stringify(el)
  local fence = text:match(":::+%s*{[^}]*}") or text:match("^:::+%s*%a+")
  if fence then
    error("divs.lua: a fenced div read as text (add a blank line before " ..
          "it): '" .. fence .. "' in '" .. text:sub(1, 70) .. "...'", 0)
  end
end
Para, Plain = unread_fence, unread_fence
