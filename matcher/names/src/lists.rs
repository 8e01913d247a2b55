//! The built-in lists the cues read. Small on purpose: no dictionary ships with the
//! crate. The lists of verbs and endings put the longer entries first, since the first
//! that matches wins; the others are in no particular order. Every list is only looked
//! up, never iterated into output.

/// Compound (two-character) surnames, checked before the single ones.
pub(crate) const COMPOUND_SURNAMES: &[&str] = &[
    "欧阳", "司马", "上官", "诸葛", "东方", "皇甫", "尉迟", "公孙", "慕容", "令狐", "长孙", "宇文", "司徒", "夏侯",
    "轩辕", "端木", "独孤", "南宫", "西门", "澹台", "呼延", "百里", "东郭", "闻人", "赫连", "申屠", "钟离", "拓跋",
];

/// Common single-character surnames. Left out on purpose: surnames that are above all
/// function words or everyday characters in running text (何, 于, 时, 成, 向, 方, 余,
/// 和, 从, 安, 常, 文, 明, 光, 金, 白, 石, 高, 马, 黄, 田, 万, 于, 花, 云, 龙, 江, 山,
/// 水), whose false alarms would drown the rest.
pub(crate) const SURNAMES: &str = "王李张刘陈杨赵吴周徐孙朱胡郭林罗郑梁谢宋唐许韩冯邓曹彭曾萧蔡潘袁\
董程苏吕魏蒋丁沈任姚卢姜崔钟谭陆汪范廖贾夏韦付邹熊孟秦邱侯薛雷贺倪汤\
易乔赖龚顾葛尹段雍邵孔毛郝邢严庞殷谷柳叶鲁季俞裴莫戚祝章翟霍虞柴顏顧劉陳楊趙張鄭謝鄧蕭蔣盧";

/// Titles and epithets that follow a name (Chinese).
pub(crate) const TITLES: &[&str] = &[
    "道人", "仙子", "公子", "真人", "长老", "宗主", "师兄", "师姐", "师弟", "师妹", "师父", "师傅", "掌门", "先生",
    "夫人", "小姐", "姑娘", "娘娘", "少爷", "老爷", "大人", "将军", "元帅", "大王", "魔王", "龙王", "天王", "大圣",
    "大帝", "真君", "星君", "帝君", "老君", "老祖", "祖师", "菩萨", "尊者", "禅师", "法师", "上人", "居士", "仙人",
    "圣母", "天尊", "太子", "公主", "国王", "神君", "散人", "山人", "剑仙", "上仙", "道长", "掌柜", "大仙", "仙女",
    "仙姑", "仙翁", "老母", "天师", "罗汉", "大将",
];

/// Japanese honorifics that follow a name.
pub(crate) const HONORIFICS: &[&str] = &["さん", "さま", "様", "くん", "君", "殿", "先生", "ちゃん", "氏"];

/// The kanji honorifics a speaker's run may end in (`」と迷亭君が` → 迷亭).
pub(crate) const JA_KANJI_HONORIFICS: &[&str] = &["先生", "君", "様", "殿", "氏"];

/// Per honorific, the kanji that make an ordinary word with it when they come last
/// before it (諸君, 細君, 同様, 模様, 奥さん, 父さん).
pub(crate) const HONORIFIC_WORDS: &[(&str, &str)] = &[
    ("君", "諸細妻貴主暴名父夫母若幼姫儲"),
    ("様", "同模有仕皆奥殿王神仏左此異一多今"),
    ("さん", "奥母父兄姉爺婆嬢"),
    ("さま", "奥母父兄姉爺婆嬢皆"),
    ("殿", "御宮神仏"),
    ("先生", "諸"),
];

/// Words that stand before a Japanese honorific but are not names (奥さん, 細君, 御殿, 皆様…).
pub(crate) const HONORIFIC_STOP: &[&str] = &[
    "奥",
    "細",
    "諸",
    "貴",
    "主",
    "父",
    "母",
    "兄",
    "姉",
    "弟",
    "妹",
    "夫",
    "若",
    "暴",
    "名",
    "幼",
    "同",
    "皆",
    "御",
    "神",
    "仏",
    "王",
    "姫",
    "嬢",
    "坊",
    "子",
    "今",
    "大",
    "小",
    "老",
    "模",
    "有",
    "仕",
    "殿",
    "宮",
    "旦那",
    "奥様",
    "皆様",
    "母様",
    "伯父",
    "叔父",
    "伯母",
    "叔母",
    "祖父",
    "祖母",
    "今日",
    "随分",
    "大変",
    "本当",
    "父様",
    "爺",
    "婆",
    "娘",
    "坊ちゃん",
    "先",
    "人",
    "医",
    "客",
    "学",
    "外",
    "此",
    "彼",
    "其",
    "誰",
    "何",
];

/// Characters that hardly occur in a Chinese name: grammar words, pronouns, common
/// verbs of speech and motion. A candidate after its surname, a quoted candidate or a
/// frequent n-gram holding one of them is not name-like.
pub(crate) const ZH_STOP_CHARS: &str = "的了是在不也着说道和就都而与之其这那个们有没么你我他她它把被从对向为以\
于及或并但却又很更最已将会能要可想看听见到去来里过还只再才便让给吗呢吧啊呀哪谁什怎样些每各所若此即等\
时后自己得地着罢哩么呵儿般今都您曰乃矣焉哉也者亦做作叫拿问请拜望言称笑吃跳打众";

/// Numerals: an n-gram with two of them is a number, not a name.
pub(crate) const NUMERALS: &str = "一二三四五六七八九十百千万两〇零";

/// Common two-character words that repeat in any Chinese chapter and are not names.
pub(crate) const ZH_STOP_WORDS: &[&str] = &[
    "一个", "一下", "一声", "一点", "一起", "一般", "一时", "一直", "一样", "不知", "不得", "不能", "不敢", "不曾",
    "不肯", "不要", "不会", "不必", "没有", "知道", "已经", "时候", "现在", "今天", "今夜", "明天", "起来", "出来",
    "回来", "过来", "下去", "上去", "出去", "回去", "进去", "先生", "弟子", "师兄", "师姐", "师父", "老者", "声音",
    "只见", "天下", "世界", "东西", "地方", "事情", "众人", "大家", "身上", "手里", "心里", "眼睛", "心中", "手中",
    "那里", "这里", "哪里", "甚么", "怎的", "却说", "只得", "如今", "如何", "如此", "如意", "不如", "正是", "真是",
    "自然", "原来", "果然", "忽然", "终于", "然后", "因为", "所以", "如果", "可是", "但是", "虽然", "于是", "此时",
    "当时", "那时", "后来", "以后", "以前", "前面", "后面", "里面", "外面", "上面", "下面", "中间", "旁边", "一面",
    "一边", "两边", "左右", "上下", "大小", "多少", "东南", "西北", "南北", "东西", "天地", "日月", "山中", "水中",
    "门外", "门前", "身边", "面前", "头上", "脸上", "脸色", "点头", "摇头", "回头", "抬头", "低头", "开口", "说话",
    "答应", "告诉", "看见", "听见", "只有", "还有", "所有", "不过", "只是", "还是", "就是", "便是", "乃是", "却是",
    "也是", "都是", "好像", "像是", "剑法", "长剑", "火光", "黑衣", "白衣", "弟兄", "兄弟", "姐妹", "父母", "孩子",
    "老人", "少年", "女子", "男子", "大王", "小的", "妖精", "神仙", "仙人", "天上", "人间", "宝贝", "兵器", "老孙",
    "我等", "汝等", "吾等", "贫僧", "许多",
];

/// Common katakana loanwords that are not names.
pub(crate) const LOANWORDS: &[&str] = &[
    "ページ",
    "テレビ",
    "ラジオ",
    "ホテル",
    "レストラン",
    "コーヒー",
    "ビール",
    "パン",
    "バス",
    "タクシー",
    "ドア",
    "テーブル",
    "ベッド",
    "ボタン",
    "ポケット",
    "ハンカチ",
    "ランプ",
    "ペン",
    "ノート",
    "インキ",
    "インク",
    "ガラス",
    "コップ",
    "ナイフ",
    "フォーク",
    "スプーン",
    "シャツ",
    "ズボン",
    "ネクタイ",
    "ハイカラ",
    "ボール",
    "ゲーム",
    "ピアノ",
    "ヴァイオリン",
    "バイオリン",
    "ギター",
    "オルガン",
    "ラッパ",
    "メートル",
    "キロ",
    "グラム",
    "トン",
    "マッチ",
    "タバコ",
    "ゴム",
    "ペンキ",
    "ペンキ",
    "ステッキ",
    "カバン",
    "ランドセル",
    "ストーブ",
    "エレベーター",
    "スープ",
    "ケーキ",
    "バター",
    "チーズ",
    "ミルク",
    "ジュース",
    "ワイン",
    "ウイスキー",
    "カメラ",
    "フィルム",
    "ニュース",
    "スポーツ",
    "チーム",
    "クラス",
    "グループ",
    "メンバー",
    "センター",
    "システム",
    "サービス",
    "コンピュータ",
    "コンピューター",
    "インターネット",
    "メール",
    "データ",
    "プログラム",
    "ファイル",
    "トイレ",
    "アパート",
    "マンション",
    "ビル",
    "デパート",
    "スーパー",
    "コンビニ",
    "カード",
    "チケット",
    "ゴルフ",
    "テニス",
    "サッカー",
    "ジャム",
    "ベル",
    "ピン",
    "ハンケチ",
    "コート",
    "フロックコート",
    "スキー",
    "プール",
    "ダンス",
    "ドラマ",
    "アニメ",
    "マンガ",
    "キス",
    "デート",
    "パーティー",
];

/// Chinese: characters a name-like span is not read across when the cues walk back
/// from a verb or a place suffix, or forward from a term of address, a verb of motion
/// or an enumeration comma: grammar words, pronouns, measure words and the verbs that
/// stand next to names (见, 请, 奉, 至, 往…). Smaller
/// than [`ZH_STOP_CHARS`] where names need it: 来 (如来), 者 (行者), 能 (悟能), 地
/// (地府), 后, 自, 儿, 谢 and 令 (surnames) may be read into a name.
pub(crate) const ZH_BREAK_CHARS: &str = "的了是在不也着说道和就都而与之其这那个们有没么你我他她它把被从对向为以\
于及或并但却又很更最已将会要可想看听见到去过还只再才便让给吗呢吧啊呀谁什怎样些每各所此即等时得罢哩呵\
您曰乃矣焉哉亦做作叫拿问请拜望言称笑吃跳打同奉差命教唤随蒙好位至往入赴离众闻喝骂怒喜惊哭叹应奏领传\
知座一声忙急欢归回奔投进出上登";

/// Chinese verbs of speech and action that follow a speaker (`X道`, `X笑道`, `X听了`),
/// longest first: the [`Cue::Speaker`](crate::Cue::Speaker) cue reads the name before
/// them.
pub(crate) const ZH_SPEECH_VERBS: &[&str] = &[
    "满心欢喜",
    "心中大喜",
    "心中暗喜",
    "大惊失色",
    "顿然醒悟",
    "笑道",
    "问道",
    "答道",
    "叫道",
    "喝道",
    "骂道",
    "说道",
    "怒道",
    "喜道",
    "哭道",
    "叹道",
    "应道",
    "奏道",
    "闻言",
    "听了",
    "听得",
    "听说",
    "见了",
    "大怒",
    "大喜",
    "大惊",
    "欢喜",
    "传旨",
    "领旨",
    "闻得",
    "见说",
    "一见",
    "看见",
    "得了",
    "即忙",
    "急忙",
    "连忙",
    "慌忙",
    "启奏",
    "大笑",
    "心中",
    "低头",
    "抬头",
    "点头",
    "回头",
    "转身",
    "起身",
    "上前",
    "近前",
    "拜谢",
    "谢恩",
    "叩头",
    "闻报",
    "闻奏",
    "即命",
    "即唤",
    "正在",
    "十分",
    "道",
    "说",
    "问",
    "答",
    "曰",
];

/// Chinese adverbs that follow the subject of a sentence (`玉皇又`, `大圣却`): the
/// [`Cue::Speaker`](crate::Cue::Speaker) cue reads a subject before them when the
/// sentence starts right before it.
pub(crate) const ZH_SUBJECT_ADVERBS: &str = "又却即便遂也就亦乃正方才已都只";

/// Marks after which a Chinese sentence (and its subject) starts.
pub(crate) const ZH_SENTENCE_MARKS: &str = "。！？；：“”‘’「」『』\n\r 　…—";

/// Words after which a subject starts (`那大圣`, `只见玉帝`, `却说那美猴王`).
pub(crate) const ZH_SUBJECT_MARKERS: &[&str] = &["那", "这", "只见", "却说", "话表", "原来", "忽见", "且说", "却表"];

/// Chinese verbs of motion before a place (`至灌江口`, `往东土`, `到了长安`): the
/// [`Cue::Place`](crate::Cue::Place) cue reads the place after them.
pub(crate) const ZH_MOTION_VERBS: &[&str] = &[
    "到了", "离了", "来到", "回到", "径至", "直至", "径奔", "径往", "前往", "飞往", "至", "到", "往", "奔", "赴", "入",
    "离", "上", "出", "进", "归", "投", "登",
];

/// Chinese terms of address and naming before a name (`师兄沈照`, `唤做清风`): the
/// [`Cue::Addressed`](crate::Cue::Addressed) cue reads the name after them.
pub(crate) const ZH_ADDRESS: &[&str] = &[
    "师兄", "师姐", "师弟", "师妹", "师父", "师傅", "哥哥", "姐姐", "大哥", "二哥", "三哥", "大姐", "贤弟", "贤妹",
    "兄长", "老弟", "舅舅", "叔叔", "伯伯", "贤侄", "道友", "徒弟", "弟子", "唤做", "叫做", "名唤", "名叫", "法名",
    "道号", "号称", "姓名", "龙王", "将军", "元帅", "大将", "丞相", "太尉", "天师", "臣",
];

/// The naming words of [`ZH_ADDRESS`]: what follows them is a name even when said once.
pub(crate) const ZH_NAMING: &[&str] = &["唤做", "叫做", "名唤", "名叫", "法名", "道号", "号称", "姓名"];

/// Chinese place suffixes: the [`Cue::Place`](crate::Cue::Place) cue reads the one to
/// four characters before them as a place name (花果山, 水帘洞, 南天门).
pub(crate) const ZH_PLACE_SUFFIXES: &str =
    "山洞宫殿国洲河海门城府庄观寺岭岩林池桥关江湖峰州界院园阁楼台亭塔泉溪涧谷坡岛县郡村镇";

/// The place suffixes that make place names of two characters (东海, 江州, 梅山); the
/// others need two characters before them (洞门 and 宝殿 are words, 南天门 a place).
pub(crate) const ZH_PLACE_SUFFIXES_SHORT: &str = "山海宫国州洲河江湖池县郡寺庄峰岛";

/// Chinese locatives: a span ending in one (洞中, 门外, 山前, 陛下) is a noun and its
/// place, no name.
pub(crate) const ZH_LOCATIVES: &str = "中里外内前后边旁间上下";

/// Chinese verbs that make an ordinary word with a place suffix after them (出门, 上山,
/// 归洞): a place name does not end in them and the suffix.
pub(crate) const ZH_PLACE_VERBS: &str = "出开归上下回进关闭守把登离过";

/// Chinese nouns of a role or a crowd that stand where names stand (`师父道`,
/// `众猴道`) and are no names.
pub(crate) const ZH_ROLES: &[&str] = &[
    "师父", "师傅", "徒弟", "弟子", "长老", "老者", "童子", "妇人", "和尚", "众人", "大家", "那厮", "老儿", "呆子",
    "妖精", "妖怪", "小妖", "众猴", "众神", "众仙", "老孙", "老猪", "我等", "汝等", "女子", "男子", "少年", "老人",
    "孩子", "将军", "大人", "小人", "夫人", "小姐", "公子", "先生", "贫僧", "贫道", "小的", "大王", "陛下", "圣上",
    "皇帝", "国王", "娘娘", "老爷", "太太", "丫鬟", "家人", "主人", "客人", "众将", "众官", "众臣", "天兵", "神将",
];

/// Japanese given-name endings: a kanji run ending in one (藤十郎) or a katakana run
/// before 助 (ピン助) reads as a name.
pub(crate) const JA_GIVEN_ENDINGS: &[&str] =
    &["右衛門", "左衛門", "衛門", "兵衛", "之助", "之丞", "太郎", "次郎", "郎", "助", "蔵"];

/// Japanese phrases after a name that say it is one (`…という`, `…と云う`, `…と申す`).
pub(crate) const JA_NAMING: &[&str] = &["という", "と云う", "と言う", "と申す", "とかいう", "とか云う", "と名"];

/// Japanese verbs of speech, by their first kanji, after a speaker and は or が
/// (`迷亭が云う`, `主人は笑った`).
pub(crate) const JA_SPEECH_VERBS: &str = "云言聞答笑叫怒尋訊話";

/// Japanese nouns of a person after a naming phrase (`寒月という男`).
pub(crate) const JA_PERSON_NOUNS: &[&str] = &[
    "男", "女", "人", "者", "奴", "方", "先生", "博士", "学士", "紳士", "婦人", "令嬢", "娘", "子", "猫", "犬", "御仁",
];

/// Japanese nouns of a role, and adverbs, that stand where a speaker's name stands
/// (`と主人が`, `と今度は`).
pub(crate) const JA_ROLES: &[&str] = &[
    "主人",
    "細君",
    "吾輩",
    "下女",
    "妻君",
    "客",
    "先生",
    "小供",
    "子供",
    "男",
    "女",
    "老人",
    "亭主",
    "女房",
    "旦那",
    "奥様",
    "御嬢さん",
    "書生",
    "車夫",
    "車屋",
    "学者",
    "相手",
    "彼",
    "彼等",
    "自分",
    "僕",
    "君",
    "我々",
    "人",
    "今度",
    "今日",
    "今",
    "又",
    "令嬢",
    "夫人",
    "一同",
    "両人",
    "三人",
    "二人",
];
