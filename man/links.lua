-- SPDX-License-Identifier: GPL-2.0-or-later
-- Markdown of docs/ as a man page.

-- A '|' in a code span of a table cell is written '\\|' in docs/
-- (Code, below).

-- A document of docs/ by name: the man page that holds it whole, or
-- where the package installs it. "docs/cmdline.md", "cmdline.md" ->
-- "ramboot-cmdline(7)"; "lazy.md" -> "/usr/share/doc/ramboot/lazy.md".
local DOCDIR = "/usr/share/doc/ramboot/"
local pages = { cmdline = "ramboot-cmdline(7)", ramboot = "ramboot(8)" }

local function doc_ref(path)
  local name = path:match("([%w_-]+)%.md$")
  if not name then return nil end
  return pages[name] or (DOCDIR .. name .. ".md")
end

local function rename(s)
  return (s:gsub("[%w_./-]*[%w_-]+%.md", function(p) return doc_ref(p) or p end))
end

function Str(el)
  local t = rename(el.text)
  if t ~= el.text then return pandoc.Str(t) end
end

function Code(el)
  el.text = el.text:gsub("\\|", "|")
  return el
end

-- A man page has no links: keep the text. A link into another
-- document whose text does not name it says where that document is.
function Link(el)
  local target = el.target:gsub("#.*", "")
  local ref = target ~= "" and not target:match("^%a+:") and doc_ref(target)
  local text = pandoc.utils.stringify(el.content)
  if ref and not text:match("%.md") and not text:match("%(%d%)") then
    local out = el.content
    table.insert(out, pandoc.Str(" (" .. ref .. ")"))
    return out
  end
  return el.content
end

-- Tables become tagged paragraphs (.TP), as option lists are in man
-- pages: the first cell is the tag; the other cells follow, each after
-- its column's name unless that column is the description itself.
local plain = { [""] = true, meaning = true, purpose = true, value = true,
                what = true, description = true }

local function text(blocks)
  return pandoc.utils.stringify(pandoc.Pandoc(blocks))
end

function Table(el)
  local heads = {}
  if #el.head.rows > 0 then
    for i, cell in ipairs(el.head.rows[1].cells) do
      heads[i] = text(cell.contents):lower()
    end
  end
  local items = {}
  for _, body in ipairs(el.bodies) do
    for _, row in ipairs(body.body) do
      local term, defs = nil, {}
      for i, cell in ipairs(row.cells) do
        local blocks = cell.contents
        if i == 1 then
          term = (#blocks > 0 and blocks[1].content) or {}
        elseif #blocks > 0 and text(blocks) ~= "" then
          local inl = {}
          for _, b in ipairs(blocks) do
            if b.content then
              for _, x in ipairs(b.content) do table.insert(inl, x) end
            end
          end
          local h = heads[i] or ""
          local labelled = not plain[h]
          if labelled then
            table.insert(inl, 1, pandoc.Space())
            table.insert(inl, 1, pandoc.Emph({ pandoc.Str(h .. ":") }))
          end
          table.insert(defs, { pandoc.Para(inl), labelled = labelled })
        end
      end
      -- the description first, then the labelled columns
      local def = {}
      for _, d in ipairs(defs) do
        if not d.labelled then table.insert(def, d[1]) end
      end
      for _, d in ipairs(defs) do
        if d.labelled then table.insert(def, d[1]) end
      end
      table.insert(items, { term, { def } })
    end
  end
  return pandoc.DefinitionList(items)
end
