-- ledgerflow 0.1.0: project ts08_named_selector (id 0b000000-0000-4000-8000-000000000008, version 1)
-- Parameters: :period_identifier, :period_start, :period_end, :run_started_at
-- Inputs (views the runner creates from each dataset's resolved locations, normalised to the
-- declared columns plus system columns):
--   ds_gl <- dataset gl (period, latest active version)
--   ds_cost_centers <- dataset cost_centers (period, latest active version)

-- lf_stage_1: operations input, 1; materialised by the runner before the next statement
WITH `input` AS (
  SELECT
    `journal_id`,
    `line_number`,
    `posting_date`,
    `account_code`,
    `cost_center_code`,
    `currency`,
    `amount_local`,
    `amount_reporting`,
    `description`,
    `source_system`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    0 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`
  FROM `ds_gl`
  WHERE
    (
      `_period` = :period_identifier
      OR (
        `_period` >= CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN DATE_FORMAT(:period_start, 'yyyy-MM')
          ELSE CONCAT(:period_identifier, '-')
        END
        AND `_period` < CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN CONCAT(DATE_FORMAT(:period_end, 'yyyy-MM'), '.')
          ELSE CONCAT(:period_identifier, '.')
        END
      )
    )
    AND (
      `_period` IS NOT DISTINCT FROM :period_identifier
      OR (
        LENGTH(`_period`) IN (4, 7, 10)
        AND `_period` RLIKE '^[0-9]{4}(-(Q[1-4]|[0-9]{2}(-[0-9]{2})?))?$'
        AND (
          SUBSTRING(`_period`, 6, 1) = 'Q'
          OR NOT TRY_TO_DATE(RPAD(`_period`, 10, '-01')) IS NULL
        )
      )
    )
), `op_001_join_cc` AS (
  SELECT
    `code` AS `cc__code`,
    `name` AS `cc__name`,
    `department` AS `cc__department`,
    `region` AS `cc__region`,
    `is_active` AS `cc__is_active`,
    `_period` AS `cc___period`,
    COUNT(*) OVER (PARTITION BY `code`) AS `cc___lf_matches`
  FROM (
    SELECT /*+ COALESCE(1) */
      `code`,
      `name`,
      `department`,
      `region`,
      `is_active`,
      `_period`
    FROM `ds_cost_centers`
    WHERE
      NOT `_deleted`
      AND (
        `_period` = :period_identifier
        OR (
          `_period` >= CASE
            WHEN :period_identifier LIKE '%Q%'
            THEN DATE_FORMAT(:period_start, 'yyyy-MM')
            ELSE CONCAT(:period_identifier, '-')
          END
          AND `_period` < CASE
            WHEN :period_identifier LIKE '%Q%'
            THEN CONCAT(DATE_FORMAT(:period_end, 'yyyy-MM'), '.')
            ELSE CONCAT(:period_identifier, '.')
          END
        )
      )
      AND (
        `_period` IS NOT DISTINCT FROM :period_identifier
        OR (
          LENGTH(`_period`) IN (4, 7, 10)
          AND `_period` RLIKE '^[0-9]{4}(-(Q[1-4]|[0-9]{2}(-[0-9]{2})?))?$'
          AND (
            SUBSTRING(`_period`, 6, 1) = 'Q'
            OR NOT TRY_TO_DATE(RPAD(`_period`, 10, '-01')) IS NULL
          )
        )
      )
  ) AS `join_rows`
), `op_001_update` AS (
  SELECT
    `transactions`.`journal_id`,
    `transactions`.`line_number`,
    `transactions`.`posting_date`,
    `transactions`.`account_code`,
    `transactions`.`cost_center_code`,
    `transactions`.`currency`,
    CASE
      WHEN NOT `transactions`.`_deleted` AND (
        (
          `cc`.`cc__region` = 'EMEA'
        )
      )
      THEN CAST(`transactions`.`amount_local` * 1.05 AS DECIMAL(18, 2))
      ELSE `transactions`.`amount_local`
    END AS `amount_local`,
    `transactions`.`amount_reporting`,
    `transactions`.`description`,
    `transactions`.`source_system`,
    `transactions`.`_row_id`,
    `transactions`.`_deleted`,
    CASE
      WHEN NOT `transactions`.`_deleted` AND (
        (
          `cc`.`cc__region` = 'EMEA'
        )
      )
      THEN :run_started_at
      ELSE `transactions`.`_updated_at`
    END AS `_updated_at`,
    `transactions`.`_period`,
    `transactions`.`_labels`,
    `transactions`.`_source_dataset`,
    `transactions`.`_operation_seq`,
    `transactions`.`_lf_origin`,
    `transactions`.`_lf_deleted_by`,
    CAST(`transactions`.`amount_local` AS DECIMAL(18, 2)) AS `_lf_before_1_amount_local`
  FROM `input` AS `transactions`
  LEFT JOIN `op_001_join_cc` AS `cc`
    ON `transactions`.`cost_center_code` = `cc`.`cc__code`
    AND NOT `transactions`.`_deleted`
  WHERE
    (
      COALESCE(`cc`.`cc___lf_matches`, 1) <= 1
      OR RAISE_ERROR(
        CONCAT(
          'ledgerflow: runtime join \'cc\' of operation 1 matched ',
          CAST(`cc`.`cc___lf_matches` AS STRING),
          ' rows of dataset \'cost_centers\' for one working row; join key: ',
          CONCAT_WS(', ', CAST(`transactions`.`cost_center_code` AS STRING))
        )
      )
    )
)
SELECT
  *
FROM `op_001_update`;

-- output_002: operation 2 'Write uplifted lines' writes table ts08_emea_uplift
SELECT
  `journal_id`,
  `line_number`,
  `posting_date`,
  `account_code`,
  `cost_center_code`,
  `currency`,
  `amount_local`,
  `amount_reporting`,
  `description`,
  `source_system`,
  `_row_id`,
  `_deleted`,
  `_updated_at`,
  `_period`,
  `_labels`,
  `_source_dataset`,
  `_operation_seq`
FROM `lf_stage_1`
WHERE
  NOT `_deleted`;

